// The parts of `typelm run --watch` that need no process: which files an experiment's imports make it
// watch, and what it prints when a rerun's examples are not the previous run's (no pairing possible).
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importGraph, localSpecifiers } from "../../lib/lab/watch/graph.js";
import { watchDifference } from "../../lib/lab/watch/diff.js";
import type { EvaluationRow, EvaluationRun } from "../../lib/store/records.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "typelm-watch-parts-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(path: string, text: string): string {
  const full = join(dir, path);
  mkdirSync(join(full, ".."), { recursive: true });
  writeFileSync(full, text);
  return full;
}

describe("the files an experiment's imports make --watch watch", () => {
  it("follows relative imports transitively as tsx resolves them, leaves packages and node_modules out, and survives a cycle", () => {
    const entry = file("exp/experiment.ts", [
      `import { z } from "zod";`,
      `import { defineExperiment } from "typelm";`,
      `import { helper } from "./helper.js";          // helper.ts on disk`,
      `import type { Shape } from "../shared/types";  // no extension`,
      `import data from "./data.json" with { type: "json" };`,
      `const lazy = () => import("./lazy.mjs");`,
      `export { thing } from "./things/index.js";`,
      `import "./node_modules/pkg/index.js";`,
      `import { gone } from "./missing.js";`,
    ].join("\n"));
    file("exp/helper.ts", `import { back } from "./experiment";\nimport { deep } from "./util/deep.cjs";\nexport const helper = 1;\n`);
    file("exp/util/deep.cjs", `const c = require("../../shared/c.cjs");\nmodule.exports = { deep: c };\n`);
    file("shared/types.ts", "export type Shape = { a: number };\n");
    file("shared/c.cjs", "module.exports = 3;\n");
    // A JSON file is watched but not read for imports (its text here would look like one).
    file("exp/data.json", `{ "note": "import x from './not-followed.js'" }\n`);
    file("exp/lazy.mjs", "export default 1;\n");
    file("exp/things/index.ts", "export const thing = 2;\n");
    file("exp/node_modules/pkg/index.js", "export default 0;\n");
    expect(importGraph(entry).map((f) => f.slice(dir.length + 1)).sort()).toEqual([
      "exp/data.json", "exp/experiment.ts", "exp/helper.ts", "exp/lazy.mjs",
      // Not on disk yet: the name it would have, so creating it is seen.
      "exp/missing.js",
      "exp/things/index.ts", "exp/util/deep.cjs", "shared/c.cjs", "shared/types.ts",
    ]);
  });

  it("reads only relative and absolute specifiers", () => {
    expect(localSpecifiers(`import a from "a"; import b from "@scope/b"; import c from "./c.js"; import d from "/abs/d.js"; import e from "node:fs"; export * from '../e';`))
      .toEqual(["./c.js", "/abs/d.js", "../e"]);
  });
});

function run(id: string, scores: number[]): EvaluationRun {
  const rows = scores.map((s, i): EvaluationRow => ({
    index: i, exampleId: `w${i}`, inputs: { word: `w${i}` }, expected: { loud: "X" }, prediction: { loud: s === 1 ? "X" : "Y" },
    scores: { accuracy: s }, error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
  } as EvaluationRow));
  const accuracy = scores.reduce((a, b) => a + b, 0) / scores.length;
  return {
    id, kind: "evaluation", name: "shout baseline", status: "completed", startedAt: "2026-01-01T00:00:00Z", endedAt: "2026-01-01T00:00:01Z",
    score: accuracy, config: {}, summary: { metrics: { accuracy } }, error: null, rows,
  };
}

describe("the difference --watch prints", () => {
  it("when the examples are not the previous run's: each metric before and now, no test", () => {
    const before = run("aaaaaaaa-1111", [1, 1, 0, 0]);
    const now = run("bbbbbbbb-2222", [1, 1, 0, 0, 1]);
    expect(watchDifference(new Map([["shout baseline", before]]), [now])).toEqual([
      "shout baseline: run bbbbbbbb against aaaaaaaa: the examples differ (4 before, 5 now: 1 added, 0 removed), so no paired test",
      "  metric    before  now    difference",
      "  accuracy  0.500   0.600  +0.100",
    ]);
  });

  it("an evaluation the previous run did not have: its metrics, nothing to compare", () => {
    expect(watchDifference(new Map(), [run("cccccccc-3333", [1, 0, 0, 0])])).toEqual([
      "shout baseline (run cccccccc): new, nothing before it to compare with; accuracy 0.250",
    ]);
  });
});
