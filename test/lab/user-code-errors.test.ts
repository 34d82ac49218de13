// An exception thrown by the experiment's own code (its program function, its optimizer function, its
// optimizer's compile) is said to come from there, with its message and line: not "unexpected ...
// please report this", which is for typelm's own bugs.
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = realpathSync(mkdtempSync(join(tmpdir(), "typelm-user-code-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "node_modules"), { recursive: true });
symlinkSync(root, join(dir, "node_modules", "typelm"), "dir");
symlinkSync(join(root, "node_modules", "zod"), join(dir, "node_modules", "zod"), "dir");

/** An experiment whose `program` and `optimizer` lines are given; the lines before them are 11, so `program` is line 12. */
function experiment(program: string, optimizer: string): string {
  return `import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";
const Triage = Signature.define({
  name: "Triage",
  description: "Route a support ticket to its team.",
  input: { ticket: z.string() },
  output: { team: z.enum(["billing", "technical"]) },
});
const ex = (id: string, ticket: string, team: string) => ({ id, input: { ticket }, output: { team } });
const dataset = { train: [ex("a", "my invoice", "billing"), ex("b", "it crashes", "technical")], dev: [ex("d", "error 500", "technical")], test: [ex("f", "my card", "billing")] };
export default defineExperiment({ name: "tickets", dataset, signature: Triage,
  program: ${program},
  optimizer: ${optimizer},
});
`;
}

const cases: [string, string, string][] = [
  ["the program function throws", experiment(`() => { throw new RangeError("no program today"); }`, `"none"`),
    `typelm run: the experiment's program function threw RangeError: no program today (at ${dir}/case.ts:12:26); the error is in the experiment's own code, not in typelm\n`],
  ["the optimizer function throws", experiment(`({ signature }) => new Predict(signature)`, `() => { throw new TypeError("no optimizer today"); }`),
    `typelm run: the experiment's optimizer function threw TypeError: no optimizer today (at ${dir}/case.ts:13:28); the error is in the experiment's own code, not in typelm\n`],
  ["the optimizer's compile rejects", experiment(`({ signature }) => new Predict(signature)`, `() => ({ compile: async () => { throw new Error("compile failed"); } })`),
    `typelm run: the experiment's optimizer (its compile()) threw Error: compile failed (at ${dir}/case.ts:13:52); the error is in the experiment's own code, not in typelm\n`],
  ["the program function throws a string", experiment(`() => { throw "just a string"; }`, `"none"`),
    "typelm run: the experiment's program function threw Error: just a string; the error is in the experiment's own code, not in typelm\n"],
];

describe("typelm run when the experiment's own code throws", () => {
  it.each(cases)("%s", async (_name, text, expected) => {
    writeFileSync(join(dir, "case.ts"), text);
    const r = await runBuiltCli(["run", "case.ts"], dir);
    // The progress lines before it (model, baseline) are not the failure.
    expect(r.stderr.split("\n").filter((l) => l.startsWith("typelm run:")).join("\n") + "\n").toBe(expected);
    expect(r.stderr).not.toContain("please report this");
    expect(r.code).toBe(1);
  }, 60000);
});
