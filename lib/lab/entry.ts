// The lab's functions as `typelm` exports them: each loads its module (and what that module needs:
// datasets, the experiment loader, the optimizers' runs, the report code) the first time it is called,
// so `import "typelm"` does not compile them. Same signatures as the functions they forward to.
import type * as Datasets from "./datasets.js";
import type * as LoadExperiment from "./load-experiment.js";
import type * as RunExperiment from "./run-experiment.js";

/**
 * Loads a bundled dataset by name, or a folder: `train`, `dev` and `test` as `.jsonl` (one JSON object
 * a line) or `.csv` (a header row naming the columns), or one `data.jsonl` / `data.csv` split 60/20/20
 * by a seeded hash of each row's id. Columns are the signature's field names plus an optional `id`
 * (rows without one get `<split>-<n>`, or `row-<n>` in a data file). The signature comes from
 * `options.signature`, else the folder's `signature.json`. Errors name the file and the line.
 */
export const loadDataset: typeof Datasets.loadDataset = async (...args) => (await import("./datasets.js")).loadDataset(...args);

/**
 * Loads an experiment file: TypeScript runs as it is through tsx's loader (no build step), JavaScript
 * through Node's own. Its default export must be what `defineExperiment` returns.
 */
export const loadExperimentFile: typeof LoadExperiment.loadExperimentFile = async (...args) =>
  (await import("./load-experiment.js")).loadExperimentFile(...args);

/**
 * Runs an experiment once per model: the baseline on the test split, the optimizer on train/dev, the
 * optimized program on test, the registry entry. Returns everything the report needs; writes nothing
 * but the lab store and the registry (`writeExperimentReport` writes the report).
 */
export const runExperiment: typeof RunExperiment.runExperiment = async (...args) => (await import("./run-experiment.js")).runExperiment(...args);
