/**
 * An error thrown into a user's own script: Node prints the source line of the frame that threw (a line
 * of the shipped bundle) before the error, so the bundle must not be one long line. The README's quick
 * start runs as written, with no API key, in a project holding a copy of the package and the openai SDK
 * (test/helpers/bare-install.ts). Needs `npm run build` first.
 */
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO, bareInstall, type BareInstall } from "../helpers/bare-install.js";

/** The first TypeScript block of the README's "Quick start" section. */
function quickStart(): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Quick start\n"));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error("README.md has no ```ts block under ## Quick start");
  return block[1]!;
}

let bare: BareInstall;
beforeAll(() => {
  bare = bareInstall();
  bare.link("openai");
});
afterAll(() => bare?.remove());

test("the README quick start without a key prints the ConfigurationError and short lines, not the bundle", async () => {
  const code = quickStart();
  expect(code).toContain('new LM("openai/');
  // The quick start as a user saves it (its types are erased already: plain JavaScript as written).
  const r = await bare.run(code, { OPENAI_API_KEY: "" });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("ConfigurationError: LM \"openai/gpt-4o-mini\": no API key for openai. Set OPENAI_API_KEY");
  const longest = Math.max(...r.stderr.split("\n").map((line) => line.length));
  expect(longest).toBeLessThanOrEqual(500);
  expect(r.stderr.length).toBeLessThan(2000);
}, 60_000);

test("no line of the shipped JavaScript is longer than 500 characters, not counting the text of a string literal", () => {
  const dir = join(bare.typelm, "dist/pkg");
  const long: string[] = [];
  for (const file of readdirSync(dir, { recursive: true }).map(String)) {
    // vendor/ holds CommonJS copies of two dependencies, loaded only under a require() that refuses ES modules.
    if (!file.endsWith(".js") || file.startsWith("vendor")) continue;
    readFileSync(join(dir, file), "utf8").split("\n").forEach((line, i) => {
      // A long text in the source (a prompt, an instruction) stays one literal; the code around it is short.
      const code = line.replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
      if (code.length > 500) long.push(`${file}:${i + 1} (${code.length}) ${code.slice(0, 120)}`);
    });
  }
  expect(long).toEqual([]);
});
