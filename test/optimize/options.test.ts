// Options of MIPROv2, GEPA and SimpleOptimizer that no other test varies, each set to a value other
// than its default and its effect asserted from outside the run (the models' requests, the calls in
// flight, standard error, the trials' own shapes), so a value the optimizer ignored would fail here.
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { GEPA, MIPROv2, Predict, SimpleOptimizer } from "../../lib/index.js";
import type { FewShotExample, OptimizationRun, Trial } from "../../lib/index.js";
import type { LMRequest, LMResponse } from "../../lib/lm/types.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import { withStderrTTY } from "../helpers/tty.js";
import { feedbackMetric, makeToneExamples, reflector, TONE_PHRASE, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { candidateInstructions, labelOf, makeExamples, proposals, RULE_PHRASE, taskModel, Topic, useTempLab } from "./task.js";

useTempLab();
afterEach(() => { jest.restoreAllMocks(); });

const train = makeExamples(30, 61, "train");
const val = makeExamples(20, 62, "val");

/**
 * The task model, counting the requests it is answering at once. Each request is held until `target`
 * are in flight (then all go on, a turn of the event loop later) or 100 ms have passed, so a run that
 * allows `target` at once reaches exactly that peak however the examples' starts are spread in time,
 * and a run that allows more goes past it.
 */
class GaugedLM extends SimulatedLM {
  inFlight = 0;
  peak = 0;
  #waiting: (() => void)[] = [];
  constructor(private readonly target: number) {
    super({ rules: [{ phrase: RULE_PHRASE, answer: (inputs) => ({ label: labelOf(String(inputs.text)) }) }] });
  }
  protected override async complete(request: LMRequest): Promise<LMResponse> {
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    try {
      await new Promise<void>((resolve) => {
        const release = () => { clearTimeout(timer); resolve(); };
        const timer = setTimeout(() => { this.#waiting = this.#waiting.filter((w) => w !== release); resolve(); }, 100);
        this.#waiting.push(release);
        if (this.inFlight >= this.target) setImmediate(() => { for (const w of this.#waiting.splice(0)) w(); });
      });
      return await super.complete(request);
    } finally {
      this.inFlight--;
    }
  }
}

/** Everything written to standard error while `fn` runs with standard error a terminal. */
async function stderrOnTerminal(fn: () => Promise<unknown>): Promise<string> {
  const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
  await withStderrTTY(true, fn);
  const text = write.mock.calls.map((c) => String(c[0])).join("");
  write.mockRestore();
  return text;
}

const label = (p: Record<string, unknown>, ex: FewShotExample) => p.label === ex.output.label;
const program = (lm: SimulatedLM = taskModel()) => new Predict(Topic).configure((c) => { c.lm = lm; });
const proposer = () => new ScriptedLM(proposals(candidateInstructions(1, 3)));

describe("MIPROv2 options", () => {
  it("proposalTemperature: every instruction proposal is asked at that temperature (default 1.0)", async () => {
    const temperatures = async (options: { proposalTemperature?: number }) => {
      const promptModel = proposer();
      const mipro = new MIPROv2({ kDemos: 2, numCandidates: 4, numTrials: 2, seed: 1, progress: false, promptModel, ...options });
      await mipro.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
      const asked = promptModel.requests.filter((r) => r.signature?.name === "ProposeInstruction");
      expect(asked).toHaveLength(3); // candidates 1..3 of one predictor
      return { asked: asked.map((r) => r.temperature), config: mipro.lastRun!.config.proposalTemperature };
    };
    expect(await temperatures({ proposalTemperature: 0.3 })).toEqual({ asked: [0.3, 0.3, 0.3], config: 0.3 });
    expect(await temperatures({ proposalTemperature: 0 })).toEqual({ asked: [0, 0, 0], config: 0 });
    expect(await temperatures({})).toEqual({ asked: [1, 1, 1], config: 1 });
  });

  it("metricThreshold: a teacher run becomes demos when its score is above 0, or at least metricThreshold when given", async () => {
    // Half a point for a right label: kept by default (above 0) and at a threshold of 0.5, not at 0.75.
    const half = function half(ex: FewShotExample, p: Record<string, unknown>) { return label(p, ex) ? 0.5 : 0; };
    const boot = async (options: { metricThreshold?: number }) => {
      const lm = taskModel();
      const mipro = new MIPROv2({ kDemos: 2, numCandidates: 4, numTrials: 2, seed: 2, metric: half, progress: false, promptModel: proposer(), ...options });
      await mipro.compile({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val });
      const run = mipro.lastRun!;
      const trial = run.trials.find((t) => t.kind === "bootstrap")!;
      // The teacher's own requests: the first `tried` the task model got; how many it answered right.
      const teacher = lm.requests.slice(0, trial.data.tried as number);
      const right = teacher.filter((r) => labelOf(String(r.read.inputs.text)) === (lm.answer(r.read).reply as { label: string }).label).length;
      return { kept: trial.data.kept as number, tried: trial.data.tried as number, right, config: run.config.metricThreshold };
    };
    const plain = await boot({});
    expect(plain.kept).toBeGreaterThan(0);
    expect(plain.kept).toBe(plain.right);
    const lenient = await boot({ metricThreshold: 0.5 });
    expect(lenient.config).toBe(0.5);
    expect(lenient.kept).toBeGreaterThan(0);
    expect(lenient.kept).toBe(lenient.right);
    // Above every score: none is kept, so every set runs through the whole pool of 30.
    const strict = await boot({ metricThreshold: 0.75 });
    expect(strict).toMatchObject({ kept: 0, tried: 30, config: 0.75 });
    expect(strict.right).toBeGreaterThan(0); // runs were right, and still not kept
  });

  it("minibatchSize, validationSize and fullEvalEvery: minibatches of M, a validation set of V, a full evaluation after every k-th trial", async () => {
    const mipro = new MIPROv2({ kDemos: 2, numCandidates: 3, numTrials: 6, minibatchSize: 3, validationSize: 9, fullEvalEvery: 2, seed: 4, progress: false, promptModel: proposer() });
    await mipro.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    const ids = (t: Trial) => t.exampleScores!.map((e) => e.exampleId);
    const minibatches = run.trials.filter((t) => t.kind === "minibatch");
    expect(minibatches).toHaveLength(6);
    for (const t of minibatches) expect(ids(t)).toHaveLength(3);
    // V = 9 of the 20 given: the baseline's 9, one fixed sample, is what every full evaluation scores.
    const baseline = ids(run.trials.find((t) => t.kind === "baseline")!);
    expect(baseline).toHaveLength(9);
    expect(new Set(baseline).size).toBe(9);
    for (const id of baseline) expect(val.map((e) => e.id)).toContain(id);
    const full = run.trials.filter((t) => t.kind === "full");
    for (const t of full) expect([...ids(t)].sort()).toEqual([...baseline].sort());
    for (const t of minibatches) for (const id of ids(t)) expect(baseline).toContain(id);
    // A full evaluation right after minibatch trials 2, 4 and 6 (never elsewhere); the default (5) would give one.
    const after = full.map((t) => run.trials.slice(0, t.index).filter((x) => x.kind === "minibatch").length);
    expect(after.length).toBeGreaterThanOrEqual(2);
    for (const n of after) expect(n % 2).toBe(0);
    for (const t of full) expect(run.trials[t.index - 1]!.kind).toBe("minibatch");
  });

  it("concurrency: at most that many examples reach the model at once, in the bootstrap and the trials", async () => {
    for (const concurrency of [1, 3]) {
      const lm = new GaugedLM(concurrency);
      const mipro = new MIPROv2({ kDemos: 2, numCandidates: 3, numTrials: 2, seed: 1, concurrency, progress: false, promptModel: proposer() });
      await mipro.compile({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val });
      expect(lm.requests.length).toBeGreaterThan(30);
      expect(lm.peak).toBe(concurrency);
    }
  });

  it("progress: false draws no bar even when standard error is a terminal", async () => {
    const run = (progress?: boolean) => stderrOnTerminal(() => new MIPROv2({
      kDemos: 2, numCandidates: 3, numTrials: 2, seed: 1, promptModel: proposer(), ...(progress === undefined ? {} : { progress }),
    }).compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val }));
    expect(await run()).toContain("MIPROv2");
    expect(await run(false)).toBe("");
  });
});

describe("GEPA options", () => {
  const gTrain = makeToneExamples(30, 1, "train");
  const gVal = makeToneExamples(12, 2, "val");
  const toneProgram = (lm: SimulatedLM = twoRuleModel()) => new TopicAndTone().configure((c) => { c.lm = lm; });
  // As in the merge test of gepa-search.test.ts: the topic rule is wrong for "otter" (the seed's first
  // label, "animal", is right there), so the seed stays on the Pareto front below the best mean.
  const otterModel = () => new SimulatedLM({
    rules: [
      { phrase: RULE_PHRASE, answer: (i) => ({ label: String(i.text).includes("otter") ? "fruit" : labelOf(String(i.text)) }) },
      { phrase: TONE_PHRASE, answer: (i) => ({ tone: /[A-Z]/.test(String(i.text)) ? "loud" : "calm" }) },
    ],
  });
  const valWithOtter = [...gVal, ...makeToneExamples(40, 9, "extra").filter((e) => String(e.input.text).includes("otter")).slice(0, 2)];

  /** The candidate pool of a run as the trials record it: the seed and every accepted candidate, with its validation mean. */
  function poolBefore(run: OptimizationRun, index: number): { trial: number; mean: number }[] {
    return run.trials
      .filter((t) => t.index < index && (t.kind === "seed" || t.kind === "candidate") && t.error === null)
      .map((t) => ({ trial: t.index, mean: t.exampleScores!.reduce((a, e) => a + e.score, 0) / t.exampleScores!.length }));
  }
  /** Each reflective step's parent, and the candidate with the highest validation mean before it (the earliest on a tie). */
  function parentsAndBest(run: OptimizationRun): { parent: number; best: number }[] {
    return run.trials.filter((t) => t.parents.length === 1).map((t) => {
      const pool = poolBefore(run, t.index);
      const best = pool.reduce((b, c) => (c.mean > b.mean ? c : b));
      return { parent: t.parents[0]!, best: best.trial };
    });
  }

  it("candidateSelection: \"best\" always reflects on the candidate with the best validation mean; the default (Pareto) does not", async () => {
    const run = async (candidateSelection?: "best" | "pareto") => {
      const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 200, reflectionLM: new ScriptedLM(reflector()), seed: 3, useMerge: false, progress: false, ...(candidateSelection ? { candidateSelection } : {}) });
      await gepa.compile({ moduleInstance: toneProgram(otterModel()), trainingExamples: gTrain, validationExamples: valWithOtter });
      return gepa.lastRun!;
    };
    const best = await run("best");
    expect(best.config.candidateSelection).toBe("best");
    const steps = parentsAndBest(best);
    expect(steps.length).toBeGreaterThan(3);
    expect(steps.some((s) => s.best !== 0)).toBe(true); // a child overtook the seed (trial 0) at some point
    for (const s of steps) expect(s.parent).toBe(s.best);
    const pareto = await run();
    expect(pareto.config.candidateSelection).toBe("pareto");
    expect(parentsAndBest(pareto).some((s) => s.parent !== s.best)).toBe(true);
  });

  it("minibatchSize: each reflective step runs the parent on that many training examples (default 3)", async () => {
    for (const minibatchSize of [5, 1]) {
      const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 120, minibatchSize, reflectionLM: new ScriptedLM(reflector()), seed: 2, useMerge: false, progress: false });
      await gepa.compile({ moduleInstance: toneProgram(), trainingExamples: gTrain, validationExamples: gVal });
      const steps = gepa.lastRun!.trials.filter((t) => t.parents.length === 1);
      expect(steps.length).toBeGreaterThan(0);
      for (const t of steps) {
        expect(t.data.minibatch as string[]).toHaveLength(minibatchSize);
        expect(t.data.minibatchBefore as number[]).toHaveLength(minibatchSize);
        for (const id of t.data.minibatch as string[]) expect(gTrain.map((e) => e.id)).toContain(id);
      }
    }
  });

  it("useMerge: false never tries a merge in a run that merges by default", async () => {
    const merges = async (seed: number, useMerge?: boolean) => {
      const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed, progress: false, ...(useMerge === undefined ? {} : { useMerge }) });
      await gepa.compile({ moduleInstance: toneProgram(otterModel()), trainingExamples: gTrain, validationExamples: valWithOtter });
      return { merges: gepa.lastRun!.trials.filter((t) => t.parents.length === 2).length, config: gepa.lastRun!.config.useMerge };
    };
    let seed = 1;
    while ((await merges(seed)).merges === 0) {
      seed++;
      expect(seed).toBeLessThan(7);
    }
    expect(await merges(seed, false)).toEqual({ merges: 0, config: false });
    expect((await merges(seed, true)).merges).toBeGreaterThan(0);
  });

  it("concurrency: at most that many examples reach the model at once", async () => {
    const metric = function labelOnly(ex: FewShotExample, p: Record<string, unknown>) { return label(p, ex) ? 1 : { score: 0, feedback: `Rule for label: ${RULE_PHRASE}.` }; };
    for (const concurrency of [1, 4]) {
      const lm = new GaugedLM(concurrency);
      const gepa = new GEPA({ metric, maxMetricCalls: 40, reflectionLM: new ScriptedLM(() => ({ newInstruction: "Label the text, please." })), seed: 1, concurrency, progress: false });
      await gepa.compile({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val.slice(0, 12) });
      expect(lm.requests.length).toBeGreaterThanOrEqual(12);
      expect(lm.peak).toBe(concurrency);
    }
  });

  it("progress: false draws no bar even when standard error is a terminal", async () => {
    const run = (progress?: boolean) => stderrOnTerminal(() => new GEPA({
      metric: feedbackMetric, maxMetricCalls: 40, reflectionLM: new ScriptedLM(reflector()), seed: 1, ...(progress === undefined ? {} : { progress }),
    }).compile({ moduleInstance: toneProgram(), trainingExamples: gTrain, validationExamples: gVal.slice(0, 6) }));
    expect(await run()).toContain("GEPA");
    expect(await run(false)).toBe("");
  });
});

describe("SimpleOptimizer options", () => {
  it("concurrency: at most that many examples reach the model at once (default 8)", async () => {
    for (const concurrency of [2, undefined]) {
      const lm = new GaugedLM(concurrency ?? 8);
      const opt = new SimpleOptimizer({ seed: 1, numTrials: 2, kDemos: 1, progress: false, ...(concurrency === undefined ? {} : { concurrency }) });
      await opt.compile({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val });
      expect(lm.peak).toBe(concurrency ?? 8);
    }
  });

  it("seed: the same seed draws the same configurations, another seed others", async () => {
    const draws = async (seed: number) => {
      const opt = new SimpleOptimizer({ seed, numTrials: 4, kDemos: 2, instructions: candidateInstructions(0, 3), progress: false });
      await opt.compile({ moduleInstance: program(), trainingExamples: train });
      return opt.lastRun!.trials.map((t) => [t.instructions.self, t.demoIds.self]);
    };
    const a = await draws(11);
    expect(await draws(11)).toEqual(a);
    expect(await draws(12)).not.toEqual(a);
  });
});
