import { mediaFromRefs, mediaToRefs } from "../media/refs.js";
import type { MediaValue } from "../media/media.js";
import { TypelmError } from "../errors.js";
import type { Metric } from "../evaluate/metric.js";
import { metricScore } from "../evaluate/metric.js";
import type { Module } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { withTrace, type TraceEntry } from "../predict/trace.js";
import { labelledFits, type IdentifiedExample } from "./examples.js";
import type { Random } from "../random.js";
import { describeError } from "../instrument/bus.js";
import { DEFAULT_EXAMPLE_TIMEOUT, withExampleTimeout } from "../evaluate/timeout.js";

/** Per predictor path: the candidate demo sets (index 0 is the predictor's demos as given). */
export type DemoSets = Record<string, FewShotExample[][]>;

export interface BootstrapOptions {
  program: Module;
  /** The demo pool: the training examples demos may come from, with their ids (never scored by the search). */
  pool: readonly IdentifiedExample[];
  metric: Metric;
  /** Bootstrapped demos per set: the quota of the unshuffled set, and the most a shuffled set draws (DSPy's `max_bootstrapped_demos`). */
  kDemos: number;
  /**
   * Labelled demos: the size of the labelled-only set, and what every bootstrapped set is topped up
   * to with labelled pool examples (DSPy's `max_labeled_demos`); 0 for neither.
   */
  maxLabelled: number;
  /** How many demo sets per predictor, set 0 (as given) included. */
  numSets: number;
  /** Labelled demos the teacher carries into each run (never the example being run); 0 for none. */
  teacherDemos: number;
  /** A run's trace is kept when the metric scores it at least this; undefined: when it scores above 0 (as DSPy). */
  metricThreshold: number | undefined;
  /** Program runs at once. */
  concurrency: number;
  random: Random;
  /** Seconds one teacher run (program call plus metric) may take before it counts as failed (default 600). */
  exampleTimeout?: number | undefined;
}

export interface BootstrapResult {
  sets: DemoSets;
  /** Distinct pool examples the teacher was run on (each at most once). */
  tried: number;
  /** Of those, the runs the metric passed. */
  kept: number;
  /** Per set (set 0 and the labelled-only set as 0): how many bootstrapped demos the set asked for. */
  quotas: number[];
  /** The ids of the labelled demos the teacher carried, per predictor path. */
  teacherDemoIds: Record<string, string[]>;
  /** `id: Name: message` of each example whose run or metric failed (the example is skipped). */
  failures: string[];
}

/** One teacher run: per predictor path, the demo its calls gave (empty when the run failed the metric). */
interface Outcome {
  demos: Map<string, FewShotExample>;
  failure?: string;
}

/**
 * Whether a teacher run's score keeps its trace, as DSPy's BootstrapFewShot decides: at least
 * `metricThreshold` when one is given, else any score above 0.
 */
export function keepsRun(score: number, metricThreshold: number | undefined): boolean {
  return metricThreshold === undefined ? score > 0 : score >= metricThreshold;
}

/**
 * Candidate demo sets per predictor, as DSPy's `create_n_fewshot_demo_sets` builds them for MIPROv2:
 * set 0 = the predictor's own demos, set 1 = `maxLabelled` labelled pool examples, set 2 = demos
 * bootstrapped from the pool in its order until `kDemos` runs passed, sets 3.. = the same from a
 * seeded shuffle of the pool with a quota drawn from 1..kDemos (set 1 too when there is no
 * labelled-only set). Bootstrapping runs a teacher (the program carrying `teacherDemos` labelled
 * demos, minus the example being run) on pool examples one after another until the set's quota of
 * runs passed the metric (`keepsRun`), or the pool runs out; a passed run's predictor calls become
 * demos of those predictors (one call per predictor per run, a seeded choice when it made several).
 * Then, as DSPy's BootstrapFewShot does, each bootstrapped set is topped up to `maxLabelled` demos
 * with labelled pool examples whose runs did not give this set a demo. Each pool example is run at
 * most once (the teacher is the same for every set, so its outcome is too).
 */
export async function bootstrapDemoSets(o: BootstrapOptions): Promise<BootstrapResult> {
  const predictors = o.program.namedPredictors();
  const labelled = new Map(predictors.map(([path, predictor]) => [path,
    o.pool.filter((e) => labelledFits(predictor, e.example)).map((e) => new FewShotExample({ input: e.example.input, output: e.example.output, id: e.id }))]));
  const teacherDemos = new Map(predictors.map(([path]) => [path, o.teacherDemos > 0 ? o.random.sample(labelled.get(path)!, o.teacherDemos) : []]));
  const salt = o.random.int(1_000_000_000);
  const outcomes = new Map<string, Promise<Outcome>>();

  const runOne = async ({ example, id }: IdentifiedExample): Promise<Outcome> => {
    const teacher = o.program.clone();
    const paths = new Map<object, string>();
    for (const [path, p] of teacher.namedPredictors()) {
      paths.set(p, path);
      const carried = teacherDemos.get(path) ?? [];
      if (carried.length > 0) p.demos = carried.filter((d) => d.id !== id);
    }
    try {
      // A run that never settles would hang the whole compile: past the limit it is a failed run (abandoned, see withExampleTimeout).
      let doing = `${teacher.constructor.name}.call was running`;
      const { score, trace } = await withExampleTimeout(o.exampleTimeout ?? DEFAULT_EXAMPLE_TIMEOUT, () => doing, async (timedOut) => {
        const { result, trace } = await withTrace(() => teacher.call(example.input));
        if (timedOut()) return { score: 0, trace };
        const values = typeof (result as { toJSON?: unknown }).toJSON === "function" ? (result as { toJSON(): Record<string, unknown> }).toJSON() : (result as Record<string, unknown>);
        doing = "the metric was scoring";
        return { score: metricScore(await o.metric(example, values, trace), o.metric.name || "metric").score, trace };
      });
      const demos = new Map<string, FewShotExample>();
      if (!keepsRun(score, o.metricThreshold)) return { demos };
      const calls = new Map<string, TraceEntry[]>();
      for (const entry of trace) {
        const path = paths.get(entry.predictor);
        if (path !== undefined) calls.set(path, [...(calls.get(path) ?? []), entry]);
      }
      for (const [path, list] of calls) {
        const entry = list.length === 1 ? list[0]! : list[Math.floor(seededUnit(`${salt}\0${id}\0${path}`) * list.length)]!;
        demos.set(path, new FewShotExample({ input: entry.inputs, output: entry.prediction.toJSON(), id }));
      }
      return { demos };
    } catch (error) {
      return { demos: new Map(), failure: `${id}: ${describeError(error)}` };
    }
  };
  const outcomeOf = (e: IdentifiedExample): Promise<Outcome> => {
    let found = outcomes.get(e.id);
    if (found === undefined) outcomes.set(e.id, (found = runOne(e)));
    return found;
  };

  /**
   * Bootstrapped demos per path from `order`, stopping once `quota` runs passed (runs go `concurrency`
   * at a time, read in order), and the ids of the examples whose passed runs gave them.
   */
  const bootstrap = async (order: readonly IdentifiedExample[], quota: number): Promise<{ found: Map<string, FewShotExample[]>; used: Set<string> }> => {
    const found = new Map<string, FewShotExample[]>(predictors.map(([path]) => [path, []]));
    const used = new Set<string>();
    for (let i = 0; i < order.length && used.size < quota; i += o.concurrency) {
      const chunk = order.slice(i, i + o.concurrency);
      const results = await Promise.all(chunk.map(outcomeOf));
      results.forEach((r, j) => {
        if (used.size >= quota || r.demos.size === 0) return;
        used.add(chunk[j]!.id);
        for (const [path, demo] of r.demos) found.get(path)!.push(demo);
      });
    }
    return { found, used };
  };

  /** `set` topped up to `size` with labelled examples (seeded order), none of them an example in `used` or already in the set. */
  const topUp = (path: string, set: FewShotExample[], used: ReadonlySet<string>, size: number): FewShotExample[] => {
    const have = new Set(set.map((d) => d.id));
    for (const d of o.random.shuffle(labelled.get(path)!)) {
      if (set.length >= size) break;
      if (!have.has(d.id) && !used.has(d.id!)) set.push(d);
    }
    return set;
  };

  const sets: DemoSets = Object.fromEntries(predictors.map(([path, p]) => [path, [[...p.demos]]]));
  const quotas = [0];
  // DSPy builds the labelled-only set only when max_labeled_demos > 0; otherwise that set is a shuffled bootstrap too.
  const labelledSet = o.maxLabelled > 0 && [...labelled.values()].some((l) => l.length > 0);
  for (let s = 1; s < o.numSets; s++) {
    if (s === 1 && labelledSet) {
      quotas.push(0);
      for (const [path] of predictors) sets[path]!.push(o.random.sample(labelled.get(path)!, o.maxLabelled));
      continue;
    }
    const unshuffled = s === 2;
    const quota = unshuffled ? o.kDemos : 1 + o.random.int(o.kDemos);
    const order = unshuffled ? o.pool : o.random.shuffle(o.pool);
    quotas.push(quota);
    const { found, used } = await bootstrap(order, quota);
    for (const [path] of predictors) {
      const own = found.get(path)!.slice(0, quota);
      sets[path]!.push(topUp(path, own, used, Math.max(o.maxLabelled, own.length)));
    }
  }

  const settled = await Promise.all(outcomes.values());
  const failures = settled.flatMap((r) => (r.failure === undefined ? [] : [r.failure]));
  if (settled.length > 0 && failures.length === settled.length) {
    throw new TypelmError(`Bootstrapping failed on every training example it tried; the first failure: ${failures[0]}`);
  }
  return {
    sets, tried: settled.length, kept: settled.filter((r) => r.demos.size > 0).length, quotas, failures,
    teacherDemoIds: Object.fromEntries([...teacherDemos].map(([path, demos]) => [path, demos.map((d) => d.id!)])),
  };
}

/** A number in [0, 1) from a string (FNV-1a): the choice among a run's calls does not depend on run order. */
function seededUnit(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h / 4294967296;
}

/**
 * Demo sets in JSON form (for the bootstrap trial's record) and back. A media value in a demo is
 * written as a reference by sha256 (never its bytes: see media/refs.ts) and read back as the value of
 * that hash among `media` (the run's examples, given again on resume).
 */
export function demoSetsToJSON(sets: DemoSets): Record<string, unknown[][]> {
  return Object.fromEntries(Object.entries(sets).map(([p, list]) => [p, list.map((set) => set.map((d) => mediaToRefs(d.toJSON())))]));
}

/** The demo sets `demoSetsToJSON` wrote, with each media reference resolved among `media` (by sha256). */
export function demoSetsFromJSON(data: unknown, media: ReadonlyMap<string, MediaValue> = new Map()): DemoSets {
  const raw = data as Record<string, unknown[][]>;
  const resolve = (sha: string) => media.get(sha)?.bytes;
  return Object.fromEntries(Object.entries(raw).map(([p, list]) => [p, list.map((set) => set.map((d) => FewShotExample.fromJSON(mediaFromRefs(d, resolve, `demo of predictor "${p}"`))))]));
}
