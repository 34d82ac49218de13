import { loadOptional } from "../optional.js";
import { nodeCrypto } from "../load-sync.js";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ValidationError } from "../errors.js";
import { isExperiment, type ExperimentDefinition } from "./define.js";

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
    loaded = await import(`${pathToFileURL(compiled ?? file).href}?sha256=${sha256}`);
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ValidationError(`Cannot load the experiment file ${file}: ${message}`, { field: "file", cause: error });
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
