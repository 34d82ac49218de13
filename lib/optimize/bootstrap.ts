import { TypelmError } from "../errors.js";
import type { Metric } from "../evaluate/metric.js";
import { metricScore } from "../evaluate/metric.js";
import type { Module, Tunable } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { withTrace, type TraceEntry } from "../predict/trace.js";
import { exampleId } from "./examples.js";
import type { Random } from "./random.js";
import { describeError } from "../instrument/bus.js";

/** Per predictor path: the candidate demo sets (index 0 is the predictor's demos as given). */
export type DemoSets = Record<string, FewShotExample[][]>;

export interface BootstrapOptions {
  program: Module;
  trainingExamples: readonly FewShotExample[];
  metric: Metric;
  kDemos: number;
  /** How many demo sets per predictor, set 0 (as given) included. */
  numSets: number;
  /** How many training examples the program is run on. */
  runs: number;
  /** A run's trace is kept when the metric scores it at least this. */
  threshold: number;
  /** Program runs at once. */
  concurrency: number;
  random: Random;
}

export interface BootstrapResult {
  sets: DemoSets;
  tried: number;
  kept: number;
  /** `id: Name: message` of each example whose run or metric failed (the example is skipped). */
  failures: string[];
}

/** Whether an example can serve as a demo of this predictor directly (its fields are the predictor's). */
export function labelledFits(predictor: Tunable & Module, example: FewShotExample): boolean {
  const sig = (predictor as { compiledSignature?: { inputs: { name: string; required: boolean }[]; outputs: { name: string }[] } }).compiledSignature;
  if (sig === undefined) return false;
  return sig.inputs.every((f) => !f.required || f.name in example.input) && sig.outputs.some((f) => f.name in example.output);
}

/**
 * Candidate demo sets per predictor, as in MIPROv2: run the program on training examples, keep the
 * traces the metric passes (each predictor call in a kept trace becomes a demo of that predictor),
 * then build sets: 0 = the predictor's own demos, 1 = labelled training examples, 2.. = random
 * draws of bootstrapped demos topped up with labelled ones.
 */
export async function bootstrapDemoSets(o: BootstrapOptions): Promise<BootstrapResult> {
  const predictors = o.program.namedPredictors();
  const pools = new Map<string, FewShotExample[]>(predictors.map(([path]) => [path, []]));
  const order = o.random.shuffle(o.trainingExamples.map((ex, i) => [ex, exampleId(ex, "trainingExamples", i)] as const));
  // Runs go `concurrency` at a time; their outcomes are read in the seeded order, so the pools do
  // not depend on which call answered first.
  const outcome = async ([example, id]: readonly [FewShotExample, string]): Promise<{ id: string; trace: TraceEntry[]; failure?: string }> => {
    try {
      const { result, trace } = await withTrace(() => o.program.call(example.input));
      const values = typeof (result as { toJSON?: unknown }).toJSON === "function" ? (result as { toJSON(): Record<string, unknown> }).toJSON() : (result as Record<string, unknown>);
      const score = metricScore(await o.metric(example, values, trace), o.metric.name || "metric").score;
      return { id, trace: score >= o.threshold ? trace : [] };
    } catch (error) {
      return { id, trace: [], failure: `${id}: ${describeError(error)}` };
    }
  };
  const chosen = order.slice(0, o.runs);
  const outcomes: Awaited<ReturnType<typeof outcome>>[] = [];
  for (let i = 0; i < chosen.length; i += o.concurrency) outcomes.push(...(await Promise.all(chosen.slice(i, i + o.concurrency).map(outcome))));
  const failures = outcomes.flatMap((r) => (r.failure === undefined ? [] : [r.failure]));
  let kept = 0;
  for (const { id, trace } of outcomes) {
    if (trace.length === 0) continue;
    kept++;
    for (const entry of trace) {
      const found = predictors.find(([, p]) => p === entry.predictor);
      if (found === undefined) continue;
      pools.get(found[0])!.push(new FewShotExample({ input: entry.inputs, output: entry.prediction.toJSON(), id }));
    }
  }
  if (failures.length === Math.min(o.runs, order.length) && failures.length > 0) {
    throw new TypelmError(`Bootstrapping failed on every training example it tried; the first failure: ${failures[0]}`);
  }
  const sets: DemoSets = {};
  for (const [path, predictor] of predictors) {
    const labelled = o.trainingExamples.map((ex, i) => new FewShotExample({ input: ex.input, output: ex.output, id: exampleId(ex, "trainingExamples", i) }))
      .filter((ex) => labelledFits(predictor, ex));
    const pool = pools.get(path)!;
    const list: FewShotExample[][] = [[...predictor.demos]];
    for (let s = 1; s < o.numSets; s++) {
      if (s === 1 && labelled.length > 0) {
        list.push(o.random.sample(labelled, o.kDemos));
        continue;
      }
      const chosen = o.random.sample(pool, o.kDemos);
      const have = new Set(chosen.map((d) => d.id));
      for (const d of o.random.shuffle(labelled)) {
        if (chosen.length >= o.kDemos) break;
        if (!have.has(d.id)) chosen.push(d);
      }
      list.push(chosen);
    }
    sets[path] = list;
  }
  return { sets, tried: Math.min(o.runs, order.length), kept, failures };
}

/** Demo sets in JSON form (for the bootstrap trial's record) and back. */
export function demoSetsToJSON(sets: DemoSets): Record<string, unknown[][]> {
  return Object.fromEntries(Object.entries(sets).map(([p, list]) => [p, list.map((set) => set.map((d) => JSON.parse(JSON.stringify(d)) as unknown))]));
}

export function demoSetsFromJSON(data: unknown): DemoSets {
  const raw = data as Record<string, unknown[][]>;
  return Object.fromEntries(Object.entries(raw).map(([p, list]) => [p, list.map((set) => set.map((d) => FewShotExample.fromJSON(d)))]));
}
