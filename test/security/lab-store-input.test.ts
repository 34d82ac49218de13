import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ValidationError } from "../../lib/errors.js";
import { closeStoreSync } from "../../lib/store/db.js";
import type { StartRun } from "../../lib/store/lab-rows.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { EvaluationRow } from "../../lib/store/records.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-security-lab-"));
const path = join(dir, "lab.sqlite");
afterAll(() => {
  closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

/** The error `fn` throws (undefined when it does not). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("LabStore refuses what it cannot store with a ValidationError naming it", () => {
  const cyclic: Record<string, unknown> = { model: "m" };
  cyclic["self"] = { back: cyclic };

  it.each<[string, StartRun, string, RegExp]>([
    ["a bad kind", { kind: "evalution" as never, name: "r" }, "kind", /kind.*"evaluation", "optimization" or "traces".*received "evalution"/],
    ["a kind that is not a string", { kind: 7 as never, name: "r" }, "kind", /received 7/],
    ["a name that is not a string", { kind: "evaluation", name: undefined as never }, "name", /name.*a string.*received undefined/],
    ["a BigInt in config", { kind: "evaluation", name: "r", config: { optimizer: { seed: 10n } } }, "config", /config\.optimizer\.seed is a BigInt/],
    ["a cycle in config", { kind: "optimization", name: "r", config: { lm: cyclic } }, "config", /config\.lm\.self\.back refers back to config\.lm/],
    ["a config that is not an object", { kind: "evaluation", name: "r", config: [1, 2] as never }, "config", /config must be an object.*received an array/],
  ])("startRun with %s", (_what, run, field, message) => {
    const lab = LabStore.open(path);
    const before = lab.runs().length;
    const error = thrown(() => lab.startRun(run));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect((error as Error).message).toMatch(/^LabStore\.startRun/);
    expect((error as Error).message).toMatch(message);
    expect(lab.runs()).toHaveLength(before); // nothing written
  });

  it("recordExample with a BigInt in a row names the row's field, and the run stays readable", () => {
    const lab = LabStore.open(path);
    const id = lab.startRun({ kind: "evaluation", name: "rows", config: { seed: 1 } });
    const row: EvaluationRow = {
      index: 0, exampleId: "e0", inputs: { count: 3n as never }, expected: {}, prediction: null, scores: {}, error: null,
      durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
    };
    const error = thrown(() => lab.recordExample(id, row));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/inputs\.count is a BigInt/);
    const run = lab.run(id);
    expect(run?.kind === "evaluation" ? run.rows : undefined).toEqual([]);
    expect(run?.config).toEqual({ seed: 1 });
  });
});
