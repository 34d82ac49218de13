// An experiment file that does not parse, or throws while it loads: the command says where (file,
// line, column) and what the parser or the code said, in one line.
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = realpathSync(mkdtempSync(join(tmpdir(), "typelm-load-errors-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "node_modules"), { recursive: true });
symlinkSync(root, join(dir, "node_modules", "typelm"), "dir");

/** Line 3, column 13 is the second comma (1-based, as editors count). */
const MISSING_VALUE = `import { defineExperiment } from "typelm";
export default defineExperiment({
  name: "x",,
});
`;

const cases: [string, Record<string, string>, string][] = [
  ["a TypeScript file with a syntax error", { "syn.ts": MISSING_VALUE },
    `typelm run: Cannot load the experiment file ${dir}/syn.ts: syntax error at ${dir}/syn.ts:3:13: Expected identifier but found ","\n`],
  ["a JavaScript module (.mjs) with a syntax error", { "syn.mjs": MISSING_VALUE },
    `typelm run: Cannot load the experiment file ${dir}/syn.mjs: syntax error at ${dir}/syn.mjs:3:13: Unexpected token ','\n`],
  ["a .js file with a syntax error", { "syn.js": MISSING_VALUE },
    `typelm run: Cannot load the experiment file ${dir}/syn.js: syntax error at ${dir}/syn.js:3:13: Unexpected token ','\n`],
  ["a CommonJS file with a syntax error", { "syn.cjs": `const x = 1;\nmodule.exports = { a: x,, };\n` },
    `typelm run: Cannot load the experiment file ${dir}/syn.cjs: syntax error at ${dir}/syn.cjs:2:25: Unexpected token ','\n`],
  ["a TypeScript file it imports with a syntax error", { "imports.ts": `import "./helper.ts";\nexport default 1;\n`, "helper.ts": `export const y = (;\n` },
    `typelm run: Cannot load the experiment file ${dir}/imports.ts: syntax error at ${dir}/helper.ts:1:19: Unexpected ";"\n`],
  // A SyntaxError thrown while the file runs is no parse error: its message and the line that threw.
  ["a JSON.parse that throws at the top level", { "json.mjs": `const x = 1;\nJSON.parse("{oops");\nexport default x;\n` },
    `typelm run: Cannot load the experiment file ${dir}/json.mjs: SyntaxError: Expected property name or '}' in JSON at position 1 (at ${dir}/json.mjs:2:6)\n`],
  // Line and column of the TypeScript source (tsx's source maps), not of the code it was compiled to.
  ["an error thrown by the file's own code", { "throws.ts": `const n: number = 1;\nfunction f(): number { throw new RangeError("bad thing " + n); }\nf();\nexport default 1;\n` },
    `typelm run: Cannot load the experiment file ${dir}/throws.ts: RangeError: bad thing 1 (at ${dir}/throws.ts:2:30)\n`],
];

describe("typelm run on an experiment file that does not load", () => {
  it.each(cases)("%s", async (_name, files, expected) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const r = await runBuiltCli(["run", Object.keys(files)[0]!], dir);
    expect(r.stderr).toBe(expected);
    expect(r.code).toBe(1);
  }, 60000);
});
