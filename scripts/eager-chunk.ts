/**
 * What `import "typelm"` parses before a program's first line runs: dist/pkg/index.js and every chunk
 * it imports statically, transitively (the bundle's `import()` targets are left out: they load at
 * first use). Its size in bytes is the cold-start budget a change is checked against
 * (test/package/eager-budget.test.ts), and bench/import.ts prints it beside the import times: bytes move
 * with what is eager and do not move with the machine's load, as times do.
 *
 * Read from the build's own record of its outputs (dist/bundle-meta.json, esbuild's metafile written by
 * scripts/bundle.mjs): which file imports which, and which library modules each file holds.
 */
import { readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

interface Metafile {
  outputs: Record<string, { bytes: number; imports: Array<{ path: string; kind: string; external?: boolean }>; inputs: Record<string, { bytesInOutput: number }> }>;
}

/** The build's metafile beside dist/pkg, with its output paths made absolute. */
function metafile(pkgDir: string): { root: string; outputs: Metafile["outputs"] } {
  const file = join(pkgDir, "../bundle-meta.json");
  let meta: Metafile;
  try {
    meta = JSON.parse(readFileSync(file, "utf8")) as Metafile;
  } catch (error) {
    throw new Error(`Cannot read ${file} (written by scripts/bundle.mjs): run \`npm run build\` first. ${(error as Error).message}`);
  }
  // Output paths in the metafile are relative to the repository root (dist/pkg/../..).
  return { root: resolve(pkgDir, "../.."), outputs: meta.outputs };
}

/** The files `import "typelm"` loads from a build's dist/pkg directory, the entry first. */
export function eagerFiles(pkgDir: string): string[] {
  const { root, outputs } = metafile(pkgDir);
  const seen = new Set<string>();
  const stack = [relative(root, join(pkgDir, "index.js"))];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    const output = outputs[file];
    if (output === undefined) throw new Error(`${file} is not in the build's metafile: rebuild with \`npm run build\``);
    seen.add(file);
    for (const i of output.imports) if (i.kind === "import-statement" && i.external !== true) stack.push(i.path);
  }
  return [...seen].map((f) => join(root, f));
}

/** Total bytes of those files, as they are on disk. */
export function eagerBytes(pkgDir: string): number {
  return eagerFiles(pkgDir).reduce((sum, file) => sum + statSync(file).size, 0);
}

/** Bytes of each library module (`lib/<path>.ts`) in those files, largest first. */
export function eagerModuleBytes(pkgDir: string): Array<{ module: string; bytes: number }> {
  const { root, outputs } = metafile(pkgDir);
  const sizes = new Map<string, number>();
  for (const file of eagerFiles(pkgDir)) {
    for (const [module, { bytesInOutput }] of Object.entries(outputs[relative(root, file)]!.inputs)) {
      if (module.startsWith("lib/") && bytesInOutput > 0) sizes.set(module, (sizes.get(module) ?? 0) + bytesInOutput);
    }
  }
  return [...sizes].map(([module, bytes]) => ({ module, bytes })).sort((a, b) => b.bytes - a.bytes);
}
