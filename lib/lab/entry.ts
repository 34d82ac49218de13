// The lab's functions as `typelm` exports them: each loads its module (and what that module needs:
// datasets, the experiment loader, the optimizers' runs, the report code) the first time it is called,
// so `import "typelm"` does not compile them. Same signatures as the functions they forward to.
import type { Dataset, LoadDatasetOptions } from "./dataset/load.js";
import type { ExperimentDefinition } from "./experiment/define.js";
import type { LoadedExperiment } from "./experiment/load.js";
import type { ExperimentRun, RunExperimentOptions } from "./experiment/run.js";
import type { SignatureClass } from "../signature/signature.js";

/**
 * Loads a bundled dataset by name, or a folder: `train`, `dev` and `test` as `.jsonl` (one JSON object
 * a line) or `.csv` (a header row naming the columns), or one `data.jsonl` / `data.csv` split 60/20/20
 * by a seeded hash of each row's id. Columns are the signature's field names plus an optional `id`
 * (rows without one get `<split>-<n>`, or `row-<n>` in a data file). The signature comes from
 * `options.signature`, else the folder's `signature.json`. Errors name the file and the line.
 */
export async function loadDataset(nameOrPath: string, options?: LoadDatasetOptions): Promise<Dataset> {
  return (await import("./dataset/load.js")).loadDataset(nameOrPath, options);
}

/**
 * Loads an experiment file: TypeScript runs as it is through tsx's loader (no build step), JavaScript
 * through Node's own. Its default export must be what `defineExperiment` returns.
 */
export async function loadExperimentFile(path: string, cwd?: string): Promise<LoadedExperiment> {
  return (await import("./experiment/load.js")).loadExperimentFile(path, cwd);
}

/**
 * Runs an experiment once per model: the baseline on the test split, the optimizer on train/dev, the
 * optimized program on test, the registry entry. Returns everything the report needs; writes nothing
 * but the lab store and the registry (`writeExperimentReport` writes the report).
 */
export async function runExperiment<S extends SignatureClass>(experiment: LoadedExperiment | ExperimentDefinition<S>, options?: RunExperimentOptions): Promise<ExperimentRun> {
  return (await import("./experiment/run.js")).runExperiment(experiment, options);
}
