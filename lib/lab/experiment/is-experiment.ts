// Whether a value is what `defineExperiment` returned (define.ts brands it): used where an experiment
// is loaded or run, apart from define.ts so that `import "typelm"` does not carry it.
import type { ExperimentDefinition } from "./define.js";

/** The brand `defineExperiment` puts on what it returns (a registered symbol: the same in every copy of the package). */
const BRAND = Symbol.for("typelm.experiment");

/** True for what `defineExperiment` returned (also across copies of the package). */
export function isExperiment(value: unknown): value is ExperimentDefinition {
  return value !== null && typeof value === "object" && (value as Record<symbol, unknown>)[BRAND] === true;
}
