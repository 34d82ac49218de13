// A user's project for command-line tests of `typelm run`: typelm (this repository, built) and zod in
// its node_modules, an experiment file `experiments/shout.mjs` (shout a word) and its dataset.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const WORDS = ["ant", "bee", "yak", "dog", "eel", "fox", "gnu", "hen"];

/** Creates the project `name` in `dir`; `optimizer` is the experiment's optimizer line(s). */
export function shoutProject(dir: string, name: string, options: { words?: readonly string[]; optimizer?: string } = {}): string {
  const root = process.cwd();
  const path = join(dir, name);
  mkdirSync(join(path, "node_modules"), { recursive: true });
  symlinkSync(root, join(path, "node_modules", "typelm"), "dir");
  symlinkSync(join(root, "node_modules", "zod"), join(path, "node_modules", "zod"), "dir");
  mkdirSync(join(path, "experiments"));
  writeShoutData(path, options.words ?? WORDS);
  writeFileSync(join(path, "experiments", "shout.mjs"), `import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";

const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });

export default defineExperiment({
  name: "shout",
  dataset: "../data/words",
  signature: Upper,
  program: ({ signature }) => new Predict(signature),
  ${options.optimizer ?? `optimizer: "none",`}
});
`);
  return path;
}

/** (Re)writes the project's dataset: each word with its id (`w<n>`) and its upper-case answer, in three splits. */
export function writeShoutData(path: string, words: readonly string[]): void {
  mkdirSync(join(path, "data", "words"), { recursive: true });
  const lines = (from: number) => words.map((w, i) => JSON.stringify({ id: `w${from + i}`, word: w, loud: w.toUpperCase() })).join("\n") + "\n";
  for (const [split, from] of [["train", 100], ["dev", 200], ["test", 0]] as const) writeFileSync(join(path, "data", "words", `${split}.jsonl`), lines(from));
}
