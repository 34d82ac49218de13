/**
 * What `import "typelm"` parses before a program's first line runs: dist/pkg/index.js and every chunk
 * it imports statically, transitively (the bundle's `import()` targets are left out: they load at
 * first use). Its size in bytes is the cold-start budget a change is checked against
 * (test/package/eager-budget.test.ts), and bench/import.ts prints it beside the import times: bytes move
 * with what is eager and do not move with the machine's load, as times do.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The files `import "typelm"` loads from a build's dist/pkg directory, the entry first. */
export function eagerFiles(pkgDir: string): string[] {
  const seen = new Set<string>();
  const stack = [join(pkgDir, "index.js")];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.[^"]+)";/gms)) stack.push(join(dirname(file), m[1] as string));
    for (const m of readFileSync(file, "utf8").matchAll(/^import\s*"(\.[^"]+)";/gm)) stack.push(join(dirname(file), m[1] as string));
  }
  return [...seen];
}

/** Total bytes of those files. */
export function eagerBytes(pkgDir: string): number {
  return eagerFiles(pkgDir).reduce((sum, file) => sum + readFileSync(file).byteLength, 0);
}

/** Bytes of each library module in those files (the unminified bundle starts each module with a `// lib/<path>.ts` line), largest first. */
export function eagerModuleBytes(pkgDir: string): Array<{ module: string; bytes: number }> {
  const sizes = new Map<string, number>();
  for (const file of eagerFiles(pkgDir)) {
    const text = readFileSync(file, "utf8");
    const marks = [...text.matchAll(/^\/\/ (lib\/\S+\.ts)$/gm)];
    marks.forEach((m, i) => {
      const end = i + 1 < marks.length ? (marks[i + 1] as RegExpMatchArray).index : text.length;
      const bytes = Buffer.byteLength(text.slice(m.index, end));
      sizes.set(m[1] as string, (sizes.get(m[1] as string) ?? 0) + bytes);
    });
  }
  return [...sizes].map(([module, bytes]) => ({ module, bytes })).sort((a, b) => b.bytes - a.bytes);
}
