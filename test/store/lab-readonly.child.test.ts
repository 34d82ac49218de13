import { describe, expect, it } from "@jest/globals";
import { LabStore } from "../../lib/store/lab-store.js";

// Started by lab-store.test.ts as an unprivileged user (root ignores file modes): opens read-only places.
const target = process.env.TYPELM_CHILD_READONLY;
const run = target !== undefined ? describe : describe.skip;

run("read-only store (only in the child process lab-store.test.ts starts)", () => {
  it("raises a ConfigurationError naming the file and what to do", () => {
    let caught: unknown;
    try {
      LabStore.open(target!).startRun({ kind: "evaluation", name: "x" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: "ConfigurationError" });
    process.stdout.write(`CHILD-ERROR ${(caught as Error).message}\n`);
  });
});
