// The layout rules of lib/, measured from the code: which top-level folder imports which at run time,
// the cycles among those imports, files past the line limit and folders past theirs. test/layout.test.ts
// enforces them; `npm run build --silent && node dist/scripts/layout.js` prints the edges and any breach.
//
// A value import is one that runs: `import { x } from`, `export { x } from`, `import "x"` and `import("x")`.
// `import type`, `export type` and an import whose every name is marked `type` are erased by the
// compiler and so are not edges. A "room" is a folder directly under lib/; the files at lib/'s top
// (index.ts, errors.ts, config.ts ...) each count as a room of their own.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import ts from "typescript";

/** The most lines a file under lib/ may have. */
export const FILE_LINE_LIMIT = 450;
/** The most lines a folder's own files (not its subfolders') may have together. */
export const FOLDER_LINE_LIMIT = 3000;

/** One run-time import from one file to another, both relative to lib/. */
export interface ValueImport {
  from: string;
  to: string;
}

/** Every .ts file under `dir`, relative to it, with "/" separators. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir, { recursive: true })) {
    const path = String(name);
    if (path.endsWith(".ts") && statSync(join(dir, path)).isFile()) out.push(path.split(sep).join("/"));
  }
  return out.sort();
}

/** The relative specifiers a file imports at run time. */
export function valueSpecifiers(text: string, fileName = "file.ts"): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause;
      const typeOnly = node.isTypeOnly || (named !== undefined && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg !== undefined && ts.isStringLiteralLike(arg)) out.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.filter((s) => s.startsWith("."));
}

/** Every run-time import between files of `lib` (a path to lib/). */
export function valueImports(lib: string): ValueImport[] {
  const out: ValueImport[] = [];
  for (const file of sourceFiles(lib)) {
    for (const spec of valueSpecifiers(readFileSync(join(lib, file), "utf8"), file)) {
      const to = relative(lib, join(lib, dirname(file), spec)).split(sep).join("/").replace(/\.js$/, ".ts");
      if (!to.startsWith("..")) out.push({ from: file, to });
    }
  }
  return out;
}

/** The top-level room of a path relative to lib/: its first folder, or the file itself at the top. */
export function roomOf(path: string): string {
  const slash = path.indexOf("/");
  return slash === -1 ? path : path.slice(0, slash);
}

/** The edges between different rooms, each with the file imports that make it. */
export function roomEdges(imports: readonly ValueImport[], room: (path: string) => string = roomOf): Map<string, Map<string, ValueImport[]>> {
  const edges = new Map<string, Map<string, ValueImport[]>>();
  for (const edge of imports) {
    const a = room(edge.from);
    const b = room(edge.to);
    if (a === b) continue;
    const out = edges.get(a) ?? new Map<string, ValueImport[]>();
    edges.set(a, out);
    out.set(b, [...(out.get(b) ?? []), edge]);
  }
  return edges;
}

/** Rooms that import each other: all of them (sorted), and one cycle through some of them. */
export interface RoomCycle {
  rooms: string[];
  cycle: string[];
}

/**
 * The cycles among rooms: each strongly connected component of two or more rooms (Tarjan's algorithm),
 * as one cycle through it found by a walk, so a message can name the rooms in the order they import.
 */
export function roomCycles(edges: Map<string, Map<string, ValueImport[]>>): RoomCycle[] {
  const nodes = new Set<string>([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of [...(edges.get(v)?.keys() ?? [])].sort()) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) connect(v);
  return components.map((component) => {
    const inside = new Set(component);
    // A shortest way back to the start, found breadth first inside the component.
    const start = component[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of [...(edges.get(v)?.keys() ?? [])].sort()) {
        if (!inside.has(w)) continue;
        if (w === start) {
          const path = [v];
          while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
          return { rooms: component, cycle: [...path, start] };
        }
        if (!previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    return { rooms: component, cycle: component };
  });
}

/**
 * A cycle as a readable sentence: the rooms in the order they import each other, then every import
 * between two rooms of the same strongly connected component, with the first file import behind it.
 */
export function describeCycle({ rooms, cycle }: RoomCycle, edges: Map<string, Map<string, ValueImport[]>>): string {
  const inside = new Set(rooms);
  const steps: string[] = [];
  for (const a of [...inside].sort()) {
    for (const [b, imports] of [...(edges.get(a) ?? new Map<string, ValueImport[]>())].sort(([x], [y]) => x.localeCompare(y))) {
      if (!inside.has(b)) continue;
      const more = imports.length > 1 ? ` and ${imports.length - 1} more` : "";
      steps.push(`${a} → ${b} (lib/${imports[0]!.from} imports lib/${imports[0]!.to}${more})`);
    }
  }
  return `cycle ${cycle.join(" → ")} among ${rooms.join(", ")}: ${steps.join("; ")}`;
}

/** Lines in a text, as `wc -l` counts them plus a last line without a newline. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** Files under lib/ past FILE_LINE_LIMIT, as "lib/<path>: <n> lines". */
export function longFiles(lib: string, limit = FILE_LINE_LIMIT): string[] {
  return sourceFiles(lib)
    .map((file) => ({ file, lines: lineCount(readFileSync(join(lib, file), "utf8")) }))
    .filter(({ lines }) => lines > limit)
    .map(({ file, lines }) => `lib/${file}: ${lines} lines (limit ${limit})`);
}

/** Folders under lib/ whose own .ts files pass FOLDER_LINE_LIMIT together, as "lib/<folder>/: <n> lines". */
export function largeFolders(lib: string, limit = FOLDER_LINE_LIMIT): string[] {
  const totals = new Map<string, number>();
  for (const file of sourceFiles(lib)) {
    const folder = dirname(file);
    totals.set(folder, (totals.get(folder) ?? 0) + lineCount(readFileSync(join(lib, file), "utf8")));
  }
  return [...totals]
    .filter(([, lines]) => lines > limit)
    .map(([folder, lines]) => `lib/${folder === "." ? "" : `${folder}/`}: ${lines} lines in its own files (limit ${limit})`);
}

/** Prints the room edges, then any cycle, long file or large folder; exits 1 if there is one. */
function main(lib: string): void {
  const edges = roomEdges(valueImports(lib));
  for (const [a, out] of [...edges].sort(([x], [y]) => x.localeCompare(y))) {
    process.stdout.write(`${a} → ${[...out.keys()].sort().join(", ")}\n`);
  }
  const problems = [...roomCycles(edges).map((c) => describeCycle(c, edges)), ...longFiles(lib), ...largeFolders(lib)];
  for (const p of problems) process.stdout.write(`${p}\n`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && /scripts[\\/]layout\.(js|ts)$/.test(process.argv[1])) {
  // scripts/layout.ts reads ../lib; its build, dist/scripts/layout.js, the same source tree two folders up.
  const here = dirname(process.argv[1]);
  main(existsSync(join(here, "../lib/index.ts")) ? join(here, "../lib") : join(here, "../../lib"));
}
