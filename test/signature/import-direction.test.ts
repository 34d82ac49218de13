import { describe, expect, it } from "@jest/globals";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

// Data flows one way (DESIGN.md): signature → prompt → lm → strategy → convert (media/, the media
// values and field types, sits below signature/). A folder may
// import from itself, from a folder before it, and from the shared foundations at lib/'s top.
const LIB = join(dirname(fileURLToPath(import.meta.url)), "../../lib");
const ORDER = ["media", "signature", "prompt", "lm", "strategy", "convert"];
const FOUNDATIONS = new Set(["errors.ts", "plain-object.ts", "load-sync.ts"]);

function importsOf(folder: string): Array<{ file: string; target: string }> {
  const out: Array<{ file: string; target: string }> = [];
  for (const name of readdirSync(join(LIB, folder))) {
    if (!name.endsWith(".ts")) continue;
    const text = readFileSync(join(LIB, folder, name), "utf8");
    for (const m of text.matchAll(/(?:import|export)[^"';]*?from\s+"(\.[^"]+)"/g)) {
      const target = relative(LIB, join(LIB, folder, m[1]!)).replace(/\.js$/, ".ts");
      out.push({ file: `${folder}/${name}`, target });
    }
  }
  return out;
}

describe("import direction below predict/", () => {
  for (const [rank, folder] of ORDER.entries()) {
    it(`${folder}/ imports only from ${ORDER.slice(0, rank + 1).join(", ")} and lib's foundations`, () => {
      const wrong = importsOf(folder).filter(({ target }) => {
        const top = target.split("/")[0]!;
        const at = ORDER.indexOf(top);
        // lm/ also talks to the config, the event bus and the store (response cache).
        if (folder === "lm") return at > rank;
        if (!target.includes("/")) return !FOUNDATIONS.has(top);
        return at === -1 || at > rank;
      });
      expect(wrong).toEqual([]);
    });
  }
});
