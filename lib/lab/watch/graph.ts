// The files `typelm run --watch` watches besides the dataset: the experiment file and every file of the
// user's it imports, transitively. Found by reading the files' import statements (static and dynamic
// `import`, `export ... from`, `require`), not by loading them, so a file that does not load (a syntax
// error being fixed) still has its imports watched. Only relative and absolute specifiers count:
// packages (and anything under node_modules) are not the experiment's own code. A specifier is
// resolved as tsx and Node resolve it: the file itself, a `.js` written for a `.ts` file, a path
// without extension, a folder's index file.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, isAbsolute, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Extensions of files whose imports are followed. */
const CODE = new Set([".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"]);

/** What a written extension may stand for (TypeScript sources are imported by their JavaScript name). */
const SAME_AS: Readonly<Record<string, readonly string[]>> = {
  ".js": [".js", ".ts", ".tsx"], ".jsx": [".jsx", ".tsx"], ".mjs": [".mjs", ".mts"], ".cjs": [".cjs", ".cts"],
};

/** Tried, in order, after a specifier without a known extension (and after `/index` for a folder). */
const ADDED = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json"];

/** `import x from "s"`, `export { x } from "s"`, `import "s"`, `import("s")`, `require("s")`. */
const SPECIFIERS = [
  /\b(?:import|export)\s[^;"'`]*?\bfrom\s*(["'])([^"'\n]+)\1/g,
  /\bimport\s*(["'])([^"'\n]+)\1/g,
  /\b(?:import|require)\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g,
];

/**
 * The experiment file and the user's files it imports, directly or through each other (absolute
 * paths, the experiment file first, each once). A relative import that resolves to no file is listed
 * as its most likely path, so creating that file is seen too.
 */
export function importGraph(entry: string): string[] {
  const found = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (!CODE.has(extname(file).toLowerCase())) continue;
    let source: string;
    try {
      source = readFileSync(file, "utf8");
    } catch {
      continue; // gone or unreadable now: still watched, so its return is seen
    }
    for (const specifier of localSpecifiers(source)) {
      for (const target of resolveLocal(specifier, dirname(file))) {
        if (found.has(target) || target.split(sep).includes("node_modules")) continue;
        found.add(target);
        queue.push(target);
      }
    }
  }
  return [...found];
}

/** The relative and absolute specifiers a file's source imports (packages left out). */
export function localSpecifiers(source: string): string[] {
  const out = new Set<string>();
  for (const pattern of SPECIFIERS) {
    for (const m of source.matchAll(pattern)) {
      const specifier = m[2]!;
      if (specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === ".." || specifier.startsWith("file:") || isAbsolute(specifier)) {
        out.add(specifier);
      }
    }
  }
  return [...out];
}

/**
 * The files a local specifier may load, from the importing file's folder: each existing file it can
 * stand for (both `x.js` and `x.ts` when both exist), else the path it most likely means.
 */
export function resolveLocal(specifier: string, fromDir: string): string[] {
  let path: string;
  try {
    path = specifier.startsWith("file:") ? fileURLToPath(specifier) : resolve(fromDir, specifier.replace(/[?#].*$/, ""));
  } catch {
    return [];
  }
  const ext = extname(path).toLowerCase();
  const base = path.slice(0, path.length - ext.length);
  const written = SAME_AS[ext];
  if (written !== undefined) {
    const existing = written.map((e) => base + e).filter(isFile);
    return existing.length > 0 ? existing : [path];
  }
  if (isFile(path)) return [path];
  for (const candidate of [...ADDED.map((e) => path + e), ...ADDED.map((e) => `${path}${sep}index${e}`)]) {
    if (isFile(candidate)) return [candidate];
  }
  return [ext === "" ? `${path}.ts` : path];
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}
