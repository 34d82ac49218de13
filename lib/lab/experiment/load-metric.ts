import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ValidationError } from "../../errors.js";
import { nodeCrypto } from "../../load-sync.js";
import { isMetricObject, type Metric } from "../../evaluate/metric.js";
import type { MetricSpec } from "../../evaluate/scoring.js";
import { typescriptLoader } from "./load.js";

const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);
const JAVASCRIPT = new Set([".js", ".mjs", ".cjs"]);

/**
 * Loads a metric file for `typelm rescore --metric`: TypeScript through tsx's loader (as experiment
 * files are), JavaScript through Node's. Its default export must be a metric function
 * `(example, prediction) => score` or a metric object such as a `Judge`. An unnamed function
 * (`export default (example, prediction) => ...`) is named after the file.
 */
export async function loadMetricFile(path: string, cwd: string = process.cwd()): Promise<MetricSpec> {
  const file = resolve(cwd, path);
  if (!existsSync(file) || !statSync(file).isFile()) throw new ValidationError(`Cannot read the metric file ${file}: it does not exist`, { field: "metric" });
  const ext = extname(file).toLowerCase();
  if (!TYPESCRIPT.has(ext) && !JAVASCRIPT.has(ext)) {
    throw new ValidationError(`The metric file ${file} must be TypeScript or JavaScript (.ts, .mts, .js, .mjs); received a "${ext || "no extension"}" file`, { field: "metric" });
  }
  if (TYPESCRIPT.has(ext)) await typescriptLoader();
  const sha256 = nodeCrypto().createHash("sha256").update(readFileSync(file)).digest("hex");
  let loaded: unknown;
  try {
    loaded = await import(`${pathToFileURL(file).href}?sha256=${sha256}`);
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ValidationError(`Cannot load the metric file ${file}: ${message}`, { field: "metric", cause: error });
  }
  let value = (loaded as { default?: unknown } | null)?.default;
  // A CommonJS-compiled file nests the default export once more.
  if (typeof value === "object" && value !== null && !isMetricObject(value) && "default" in value) value = (value as { default: unknown }).default;
  if (isMetricObject(value)) return value;
  if (typeof value === "function") {
    const fn = value as Metric;
    if (fn.name !== "" && fn.name !== "default") return fn;
    const name = basename(file, extname(file)).replace(/[^\w$]/g, "_");
    const named: Metric = (example, prediction, trace, predictor) => fn(example, prediction, trace, predictor);
    Object.defineProperty(named, "name", { value: name });
    return named;
  }
  throw new ValidationError(
    `The metric file ${file} must default-export a metric function (example, prediction) => number | boolean | { score, feedback } ` +
      `or a Judge: end it with "export default new Judge({ name, criteria, ... })"`,
    { field: "metric" },
  );
}
