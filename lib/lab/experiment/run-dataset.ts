// The dataset an experiment runs on: its folder (relative to the experiment file), a bundled name, or
// splits given inline (hashed as canonical JSON), cut to --limit.
import { isAbsolute, resolve } from "node:path";
import { canonicalJson } from "../../canonical-json.js";
import { ValidationError } from "../../errors.js";
import { nodeCrypto } from "../../load-sync.js";
import { FewShotExample } from "../../prompt/few-shot.js";
import type { SignatureClass } from "../../signature/signature.js";
import { type Dataset, loadDataset } from "../dataset/load.js";
import type { ExperimentDefinition, ExperimentSplits } from "./define.js";

/** The experiment's dataset: a folder (relative to the experiment file), a bundled name, or splits given inline. */
export async function datasetOf(def: ExperimentDefinition, dir: string): Promise<Dataset> {
  const source = def.dataset;
  if (typeof source === "string") {
    const looksLikePath = isAbsolute(source) || source.startsWith(".") || /[\\/]/.test(source);
    return loadDataset(looksLikePath ? resolve(dir, source) : source, def.signature === undefined ? {} : { signature: def.signature });
  }
  if (def.signature === undefined) {
    throw new ValidationError(`experiment "${def.name}": with { train, dev, test } given inline, "signature" is needed too`, { field: "signature" });
  }
  return inlineDataset(def.name, source, def.signature);
}

export function inlineDataset(name: string, splits: ExperimentSplits, signature: SignatureClass): Dataset {
  const take = (split: "train" | "dev" | "test") => splits[split].map((e, i) => {
    if (!(e instanceof FewShotExample) && (e === null || typeof e !== "object" || typeof (e as FewShotExample).input !== "object")) {
      throw new ValidationError(`experiment "${name}": dataset.${split}[${i}] is not an example ({ input, output })`, { field: `dataset.${split}` });
    }
    // Plain { id, input, output } objects (a JavaScript file) become examples too: the optimizers take only those.
    const id = e.id === undefined || e.id === null ? `${split}-${i + 1}` : e.id;
    return e instanceof FewShotExample && e.id === id ? e : new FewShotExample({ id, input: e.input, output: e.output });
  });
  const data = { train: take("train"), dev: take("dev"), test: take("test") };
  const hash = (xs: FewShotExample[]) => nodeCrypto().createHash("sha256").update(canonicalJson(xs.map((e) => ({ id: e.id, input: e.input, output: e.output })))).digest("hex");
  const splitsInfo = {
    train: { rows: data.train.length, sha256: hash(data.train) },
    dev: { rows: data.dev.length, sha256: hash(data.dev) },
    test: { rows: data.test.length, sha256: hash(data.test) },
  };
  // Given inline, the "files" are the splits, hashed as canonical JSON.
  const files = Object.fromEntries(Object.entries(splitsInfo).map(([k, v]) => [k, v.sha256]));
  return { ...data, signature, info: { name, path: "", licence: null, source: null, splits: splitsInfo, files } };
}

export function limited(data: Dataset, limit: number | undefined): Dataset {
  if (limit === undefined) return data;
  return { ...data, train: data.train.slice(0, limit), dev: data.dev.slice(0, limit), test: data.test.slice(0, limit) };
}

export function shaOf(data: Dataset): Record<string, string> {
  return Object.fromEntries(Object.entries(data.info.splits).map(([split, s]) => [split, s.sha256]));
}
