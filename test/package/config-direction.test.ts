/**
 * Configuration flows one way: lib/config.ts hands lower layers what they need (subscriber settings,
 * store paths) and nothing it imports, directly or further down, imports it back. Imports are read
 * with TypeScript's own pre-processor, so type-only and dynamic imports count as arrows too.
 */
import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const LIB = resolve(dirname(fileURLToPath(import.meta.url)), "../../lib");

function localImports(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, ".ts")));
}

/** Every module reachable from `start`, with the modules each one imports. */
function graphFrom(start: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const todo = [start];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (graph.has(file)) continue;
    const deps = localImports(file);
    graph.set(file, deps);
    todo.push(...deps);
  }
  return graph;
}

describe("configuration has one direction", () => {
  it("nothing lib/config.ts reaches imports lib/config.ts", () => {
    const config = resolve(LIB, "config.ts");
    const graph = graphFrom(config);
    const back = [...graph]
      .filter(([file, deps]) => file !== config && deps.includes(config))
      .map(([file]) => relative(LIB, file));
    expect(graph.size).toBeGreaterThan(5);
    expect(back).toEqual([]);
  });

  it("the store and the response cache read no configuration", () => {
    for (const file of ["store/db.ts", "store/lm-cache.ts", "lm/cache.ts", "instrument/logger.ts", "instrument/subscribers.ts"]) {
      const imports = localImports(resolve(LIB, file)).map((d) => relative(LIB, d));
      expect({ file, imports }).toEqual({ file, imports: imports.filter((d) => d !== "config.ts") });
    }
  });
});
