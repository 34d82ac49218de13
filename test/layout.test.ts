import { describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  describeCycle, FILE_LINE_LIMIT, FOLDER_LINE_LIMIT, largeFolders, longFiles, roomCycles, roomEdges, valueImports, valueSpecifiers,
} from "../scripts/layout.js";

// The layout rules of lib/ (docs/design.md): no run-time import cycle between its top-level folders,
// no file past 450 lines, no folder past 3,000 lines of its own files. Each failure names the files.
const LIB = join(dirname(fileURLToPath(import.meta.url)), "../lib");

describe("lib/'s layout", () => {
  it("has no cycle of run-time imports between its top-level folders", () => {
    const edges = roomEdges(valueImports(LIB));
    expect(roomCycles(edges).map((c) => describeCycle(c, edges))).toEqual([]);
  }, 120_000);

  it(`has no file over ${FILE_LINE_LIMIT} lines`, () => {
    expect(longFiles(LIB)).toEqual([]);
  });

  it(`has no folder over ${FOLDER_LINE_LIMIT} lines of its own files`, () => {
    expect(largeFolders(LIB)).toEqual([]);
  });
});

describe("the layout check itself", () => {
  it("counts static, re-exported, bare and dynamic imports, and not type-only ones", () => {
    const text = [
      `import { a } from "./a.js";`,
      `import type { B } from "./b.js";`,
      `import { type C, type D } from "./c.js";`,
      `import { type E, f } from "./e.js";`,
      `export { g } from "./g.js";`,
      `export type { H } from "./h.js";`,
      `import "./side.js";`,
      `const later = () => import("./lazy.js");`,
      `type T = import("./only-a-type.js").T;`,
      `import { z } from "zod";`,
    ].join("\n");
    expect(valueSpecifiers(text)).toEqual(["./a.js", "./e.js", "./g.js", "./side.js", "./lazy.js"]);
  });

  it("names a cycle's folders and the file imports behind it, and passes a tree without one", () => {
    const lib = mkdtempSync(join(tmpdir(), "typelm-layout-"));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(lib, path)), { recursive: true });
        writeFileSync(join(lib, path), text);
      };
      write("low/base.ts", `export const base = 1;\n`);
      write("high/top.ts", `import { base } from "../low/base.js";\nexport const top = base;\n`);
      write("low/types.ts", `import type { top } from "../high/top.js";\nexport type Top = typeof top;\n`);
      let edges = roomEdges(valueImports(lib));
      expect(roomCycles(edges)).toEqual([]);
      write("low/back.ts", `export const back = () => import("../high/top.js");\n`);
      edges = roomEdges(valueImports(lib));
      expect(roomCycles(edges).map((c) => describeCycle(c, edges))).toEqual([
        "cycle high → low → high among high, low: high → low (lib/high/top.ts imports lib/low/base.ts); low → high (lib/low/back.ts imports lib/high/top.ts)",
      ]);
    } finally {
      rmSync(lib, { recursive: true, force: true });
    }
  });

  it("names a file past the line limit and a folder past its limit", () => {
    const lib = mkdtempSync(join(tmpdir(), "typelm-layout-"));
    try {
      mkdirSync(join(lib, "room"));
      writeFileSync(join(lib, "room/long.ts"), "x;\n".repeat(451));
      writeFileSync(join(lib, "room/short.ts"), "x;\n".repeat(450));
      expect(longFiles(lib)).toEqual(["lib/room/long.ts: 451 lines (limit 450)"]);
      expect(largeFolders(lib, 900)).toEqual(["lib/room/: 901 lines in its own files (limit 900)"]);
      expect(largeFolders(lib, 901)).toEqual([]);
    } finally {
      rmSync(lib, { recursive: true, force: true });
    }
  });
});
