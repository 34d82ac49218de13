import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Trial } from "../store/records.js";

/** Per predictor path: the chosen instruction and demo-set indices. */
export type Choices = Record<string, { instruction: number; demos: number }>;

/** Every predictor's candidates: instruction texts and demo sets, by path. */
export interface Candidates {
  instructions: Record<string, string[]>;
  demoSets: Record<string, FewShotExample[][]>;
}

/** A clone of `program` with the chosen instruction and demos in every predictor (the original is untouched). */
export function configured(program: Module, candidates: Candidates, choices: Choices): Module {
  const copy = program.clone();
  for (const [path, p] of copy.namedPredictors()) {
    const c = choices[path];
    if (c === undefined) continue;
    p.instruction = candidates.instructions[path]![c.instruction]!;
    p.demos = [...candidates.demoSets[path]![c.demos]!];
  }
  return copy;
}

/** What a trial records about a configuration: choices, instruction texts and demo ids per predictor. */
export function describeChoices(candidates: Candidates, choices: Choices): Pick<Trial, "choices" | "instructions" | "demoIds"> {
  const instructions: Record<string, string> = {};
  const demoIds: Record<string, string[]> = {};
  for (const [path, c] of Object.entries(choices)) {
    instructions[path] = candidates.instructions[path]![c.instruction]!;
    demoIds[path] = candidates.demoSets[path]![c.demos]!.map((d, i) => d.id ?? `${path}.demos[${i}]`);
  }
  return { choices: choices as Trial["choices"], instructions, demoIds };
}

/** The key of a configuration, for grouping trials that scored the same one. */
export function choiceKey(choices: Choices): string {
  return Object.keys(choices).sort().map((p) => `${p}:${choices[p]!.instruction}/${choices[p]!.demos}`).join(";");
}

/**
 * The key of what a configuration puts in the program: per predictor the instruction text and the
 * demos (by id, else by their input and output). Two choices that build the same program share it
 * (SimpleOptimizer's trials each draw their own demo set, so with `kDemos: 0` their choices differ
 * while their programs do not); the optimizers' `ScoreMemo` keys scores by it.
 */
export function configKey(candidates: Candidates, choices: Choices): string {
  return JSON.stringify(Object.keys(choices).sort().map((path) => {
    const c = choices[path]!;
    const demos = candidates.demoSets[path]![c.demos]!.map((d) => d.id ?? JSON.stringify([d.input, d.output]));
    return [path, candidates.instructions[path]![c.instruction]!, demos];
  }));
}
