import { loadOptional } from "../../optional.js";
import { nodeCrypto } from "../../load-sync.js";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";
import { TypelmError, ValidationError } from "../../errors.js";
import { waitingFor } from "./pending.js";
import { userFrame } from "./user-code.js";
import type { ExperimentDefinition } from "./define.js";
import { isExperiment } from "./is-experiment.js";

/** An experiment file as `loadExperimentFile` loaded it: its definition, path, folder and sha256. */
export interface LoadedExperiment {
  definition: ExperimentDefinition;
  /** The experiment file (absolute). */
  file: string;
  /** Its folder: a relative `dataset` is resolved from here. */
  dir: string;
  /** sha256 of the file's bytes. */
  sha256: string;
}

const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);
const JAVASCRIPT = new Set([".js", ".mjs", ".cjs"]);

/**
 * Loads an experiment file: TypeScript runs as it is through tsx's loader (no build step), JavaScript
 * through Node's own. Its default export must be what `defineExperiment` returns.
 */
export async function loadExperimentFile(path: string, cwd: string = process.cwd()): Promise<LoadedExperiment> {
  return loadExperiment(path, cwd, undefined);
}

/**
 * `loadExperimentFile`, except that the module is imported from `compiled` (the same file compiled to
 * JavaScript at build time) when that exists: the package's bundled experiments run without tsx. The
 * file, folder and hash reported are still the TypeScript file's.
 */
export async function loadBundledExperiment(path: string, compiled: string, cwd: string = process.cwd()): Promise<LoadedExperiment> {
  return loadExperiment(path, cwd, existsSync(compiled) ? compiled : undefined);
}

async function loadExperiment(path: string, cwd: string, compiled: string | undefined): Promise<LoadedExperiment> {
  if (typeof path !== "string" || path.trim() === "") throw new ValidationError("typelm run needs an experiment file, e.g. typelm run experiments/tickets.ts", { field: "file" });
  const file = resolve(cwd, path);
  let bytes: Buffer;
  try {
    if (!statSync(file).isFile()) throw new Error("it is not a file");
    bytes = readFileSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "it does not exist" : error instanceof Error ? error.message : String(error);
    throw new ValidationError(`Cannot read the experiment file ${file}: ${reason}`, { field: "file" });
  }
  const ext = extname(file).toLowerCase();
  const sha256 = nodeCrypto().createHash("sha256").update(bytes).digest("hex");
  if (!TYPESCRIPT.has(ext) && !JAVASCRIPT.has(ext)) {
    throw new ValidationError(`The experiment file ${file} must be TypeScript or JavaScript (.ts, .mts, .js, .mjs); received a "${ext || "no extension"}" file`, { field: "file" });
  }
  // Outside the try: tsx missing is a ConfigurationError with its install line, not a load failure.
  if (TYPESCRIPT.has(ext) && compiled === undefined) await typescriptLoader();
  let loaded: unknown;
  try {
    // The content's hash in the URL: an edited file is loaded afresh in the same process (a notebook).
    loaded = await waitingFor(
      `the experiment file ${file} to finish loading (its top-level await waits for a promise that nothing settles)`,
      () => import(`${pathToFileURL(compiled ?? file).href}?sha256=${sha256}`),
    );
  } catch (error) {
    throw new ValidationError(`Cannot load the experiment file ${file}: ${loadFailure(error, file, bytes)}`, { field: "file", cause: error });
  }
  const definition = defaultExport(loaded);
  if (definition === undefined) {
    throw new ValidationError(
      `The experiment file ${file} has no default export made by defineExperiment: end it with "export default defineExperiment({ name, dataset, program })"`,
      { field: "file" },
    );
  }
  return { definition, file, dir: dirname(file), sha256 };
}

/**
 * Why an experiment file did not load, in one line. A syntax error says where, as `file:line:column`,
 * and the parser's message: tsx's (esbuild's) names the file and place in its message; Node's own for
 * CommonJS in its stack; for an ES module Node 20 gives neither, so the file is parsed again by
 * `node --check` to find it. Anything else thrown while the file ran: its message, and for an error
 * not typelm's, the line of the user's code that threw.
 */
function loadFailure(error: unknown, file: string, bytes: Buffer): string {
  const e = error as { name?: unknown; message?: unknown; stack?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : String(error);
  const transform = /^Transform failed with (\d+) errors?:\n(.+?):(\d+):(\d+): ERROR: (.+)$/m.exec(message);
  if (transform !== null) {
    const more = Number(transform[1]) - 1;
    // esbuild counts columns from 0.
    return `syntax error at ${transform[2]}:${transform[3]}:${Number(transform[4]) + 1}: ${transform[5]}${more > 0 ? ` (and ${more} more)` : ""}`;
  }
  const first = message.split("\n")[0]!;
  if (e?.name === "SyntaxError") {
    const stack = typeof e.stack === "string" ? e.stack : "";
    // A decorated stack begins "file:line", the source line, then a caret under the column.
    const decorated = /^(?:file:\/\/)?([^\n]+?):(\d+)\n[^\n]*\n( *)\^/.exec(stack);
    if (decorated !== null) return `syntax error at ${decorated[1]}:${decorated[2]}:${decorated[3]!.length + 1}: ${first}`;
    // A parse error has no frame of the file's own (a SyntaxError from JSON.parse at its top level has).
    const checked = JAVASCRIPT.has(extname(file).toLowerCase()) && userFrame(error) === undefined ? checkModuleSyntax(bytes) : undefined;
    if (checked !== undefined) return `syntax error at ${file}:${checked.line}:${checked.column}: ${checked.message}`;
  }
  if (error instanceof TypelmError) return first;
  const where = userFrame(error);
  const name = typeof e?.name === "string" && e.name !== "" ? `${e.name}: ` : "";
  return `${name}${first}${where === undefined ? "" : ` (at ${where})`}`;
}

/** Where an ES module's source fails to parse, by `node --check` on it; undefined when it parses. */
function checkModuleSyntax(bytes: Buffer): { line: number; column: number; message: string } | undefined {
  const result = spawnSync(process.execPath, ["--input-type=module", "--check"], {
    input: bytes, encoding: "utf8", timeout: 30_000, env: { ...process.env, NODE_OPTIONS: "" },
  });
  if (result.status === 0 || typeof result.stderr !== "string") return undefined;
  const m = /^\[stdin\]:(\d+)\n[^\n]*\n( *)\^[^\n]*\n\s*\n?SyntaxError: ([^\n]+)/m.exec(result.stderr);
  return m === null ? undefined : { line: Number(m[1]), column: m[2]!.length + 1, message: m[3]! };
}

let registered: Promise<unknown> | undefined;

/**
 * A resolve hook run after tsx's: a .ts file of the user's (outside node_modules) loads as an ES
 * module even where no package.json says "type": "module". Otherwise Node treats it as CommonJS, and
 * tsx compiles it, and the typelm it requires, to CommonJS: a second copy of typelm, whose Modules
 * would not be Modules here.
 */
const AS_MODULE = `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (!/\\.(ts|tsx)$/.test(new URL(r.url).pathname) || r.url.includes("/node_modules/")) return r;
  return r.format === "commonjs" || r.format === "commonjs-typescript" || r.format == null ? { ...r, format: "module-typescript" } : r;
}`;

/**
 * tsx's loader, registered once for the process (not tsImport's namespaced one): the file's
 * `import ... from "typelm"` must reach the same module instances as the code running it, or its
 * program would not be a Module here (and would not see the configured model).
 */
export function typescriptLoader(): Promise<unknown> {
  // A failed load (tsx not installed) is not kept: installing it and calling again works.
  registered ??= loadOptional<typeof import("tsx/esm/api")>("tsx", "Loading a TypeScript experiment file", "tsx/esm/api").then(async ({ register }) => {
    register();
    const { register: registerHook } = await import("node:module");
    registerHook(`data:text/javascript,${encodeURIComponent(AS_MODULE)}`);
  });
  registered.catch(() => { registered = undefined; });
  return registered;
}

/** The module's default export when it is an experiment (a CommonJS-compiled file nests it once more). */
function defaultExport(loaded: unknown): ExperimentDefinition | undefined {
  const first = (loaded as { default?: unknown } | null)?.default;
  if (isExperiment(first)) return first;
  const nested = (first as { default?: unknown } | null | undefined)?.default;
  return isExperiment(nested) ? nested : undefined;
}
