import type { FewShotExample } from "../prompt/few-shot.js";
import type { LanguageModel } from "../lm/types.js";
import type { Metric, MetricResult } from "../evaluate/metric.js";
import { Module, type CallOptions } from "../module.js";
import type { Predict } from "../predict/predict.js";
import {
  checkJudgeOptions, judgeDetailsOf, judgeLabels, judgeMetric, judgeOutputOf, judgePredictor, judgeScoreOf,
} from "./judge-impl.js";
import { provideModelMetricChecks } from "../evaluate/model-metrics.js";

/** A judge's scale: a pass/fail verdict, or a whole-number score from `min` to `max`. */
export type JudgeScale = "pass-fail" | { min: number; max: number };

/** Options of `new Judge(options)`. */
export interface JudgeOptions {
  /** The metric's name in reports (an identifier such as "correct"). */
  name: string;
  /** What the judge checks, in plain words: "The answer is right and complete given the reference." */
  criteria: string;
  /** `"pass-fail"` (default) or `{ min, max }` whole numbers, e.g. `{ min: 1, max: 5 }`. */
  scale?: JudgeScale;
  /** Show the judge the example's expected outputs (default false: only inputs and prediction). */
  reference?: boolean;
  /**
   * The judge's model (default: the one configured for the run). An evaluation refuses a judge with
   * none, or whose model is the offline stand-in (`simulated/stand-in`), before any call.
   */
  lm?: LanguageModel;
  /** The judge's instruction (default: one written from the criteria and the scale). */
  instruction?: string;
}

/** What a judge is given: the judged program's inputs and outputs, and (with `reference: true`) the expected outputs. */
export interface JudgeInput {
  inputs: Record<string, unknown>;
  prediction: Record<string, unknown>;
  expected?: Record<string, unknown>;
}

/** A judge's answer: `verdict` on a pass/fail scale, `score` on a numeric one, and always its rationale. */
export interface JudgeOutput {
  rationale: string;
  verdict?: "pass" | "fail";
  score?: number;
  /** `SemanticF1`: the share of the reference's key ideas the answer covers, and of the answer's the reference supports. */
  recall?: number;
  precision?: number;
}

/**
 * An LM-as-judge metric that is a typed program. Its inner predictor (`predictor`) has a signature
 * whose outputs are a rationale and a verdict (`"pass" | "fail"`) or a whole-number score on
 * `{ min, max }`, so a reply either parses into one of those or the call fails with an `OutputError`:
 * in an evaluation that row is an error row carrying the judge's error, never a silent 0. Of the JSON
 * objects in a reply that hold the verdict, the last one counts (the judge's own, not one it quotes
 * from the answer). An evaluation warns (`report.warnings`) when the judge gave every row one verdict.
 *
 * As a metric (`metrics: [judge]`, or `judge.metric` where a function is wanted, e.g. an optimizer's
 * `metric`) it scores in [0, 1]: pass = 1, fail = 0, a score s maps to (s − min)/(max − min). Its
 * rationale is the metric's feedback (what GEPA reflects on) and each row keeps verdict (or score)
 * and rationale in `row.details[name]`. Being a `Module`, any optimizer can tune it against human
 * labels (see `calibrate`).
 */
export class Judge extends Module<JudgeInput, JudgeOutput> {
  readonly name: string;
  readonly criteria: string;
  readonly scale: JudgeScale;
  readonly reference: boolean;
  /** The typed predictor that gives the verdict; its instruction and demos are what optimizers tune. */
  readonly predictor: Predict;

  constructor(options: JudgeOptions) {
    super();
    const { name, criteria, scale, reference } = checkJudgeOptions(options);
    this.name = name;
    this.criteria = criteria;
    this.scale = scale;
    this.reference = reference;
    this.predictor = this.buildPredictor(options);
    if (options.lm !== undefined) this.config.lm = options.lm;
  }

  /**
   * The inner predictor, made once by the constructor from the checked options (`scale`, `reference`
   * and `name` are set by then). A judge with other outputs (`SemanticF1`) makes its own, and reads
   * them in `outputOf`, `scoreOf` and `detailsOf`.
   */
  protected buildPredictor(options: JudgeOptions): Predict {
    return judgePredictor(this.scale, this.reference, options);
  }

  /** The predictor's outputs as the judge's answer. */
  protected outputOf(out: Record<string, unknown>): JudgeOutput {
    return judgeOutputOf(this.scale, out);
  }

  /** What a row keeps of the judge's answer: verdict (or score) and rationale. */
  protected detailsOf(output: JudgeOutput): Record<string, unknown> {
    return judgeDetailsOf(this.scale, output);
  }

  /** Asks the judge once: its verdict (or score) and rationale for one judged prediction. */
  async forward(input: JudgeInput, options: CallOptions = {}): Promise<JudgeOutput> {
    const values = (await import("./judge-run.js")).judgeValues(this, input);
    const out = (await this.predictor.call(values, options)) as unknown as Record<string, unknown>;
    return this.outputOf(out);
  }

  /** A verdict or score as a metric score in [0, 1]: pass = 1, fail = 0, s → (s − min)/(max − min). */
  scoreOf(output: JudgeOutput): number {
    return judgeScoreOf(this.scale, output);
  }

  /**
   * Judges one prediction of an example as a metric: the score in [0, 1], the rationale as feedback,
   * and verdict (or score) with rationale as the row's details. The judge's own predictor calls stay
   * out of the caller's trace (an optimizer bootstrapping demos from it sees only its program's).
   */
  async judge(example: FewShotExample, prediction: Record<string, unknown>): Promise<MetricResult & { details: Record<string, unknown> }> {
    const result = await (await import("./judge-run.js")).judgeUntraced(this, example, prediction);
    return { score: this.scoreOf(result), feedback: result.rationale, details: this.detailsOf(result) };
  }

  /** The judge as a metric function named after the judge (`Evaluation` also takes the judge itself). */
  get metric(): Metric {
    return judgeMetric(this);
  }

  /** The labels of this judge's scale, in order: ["pass", "fail"], or min … max as text. */
  get labels(): string[] {
    return judgeLabels(this.scale);
  }

  /** The output field that holds the verdict: "verdict" or "score". */
  get verdictField(): "verdict" | "score" {
    return this.scale === "pass-fail" ? "verdict" : "score";
  }
}

// An evaluation sees judges through evaluate/'s checks of metrics with a model of their own (evaluate/
// does not import judge/). The checks (judge-check.ts) load at the first evaluation with a judge among
// its metrics, before its first row; an evaluation without one loads nothing.
provideModelMetricChecks((metrics) =>
  metrics?.some((m) => m instanceof Judge) ? import("./judge-check.js").then((checks) => checks.judgeChecks) : undefined);
