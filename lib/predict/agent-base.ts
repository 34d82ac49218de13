import { withModuleLM } from "../config.js";
import { Module, withCallSampling, type CallOptions } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { InputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { AgentTool } from "./agent-options.js";
import { assignStepExtractDemos, stepExtractDemos, stepLoopSetup } from "./agent-base-setup.js";
import type { Predict } from "./predict.js";

/**
 * An agent made of two predictors working on one task (ReAct and CodeAct: `step` and `extract`;
 * ProgramOfThought: `generate` and `repair`). Both are ordinary predictors, so `namedPredictors()`
 * lists them and optimizers tune them; they share one instruction.
 */
export abstract class PredictorPairAgent<I extends Shape, O extends Shape, R> extends Module<InputOf<I>, R> {
  abstract readonly signature: SignatureClass<I, O>;
  /** The predictor whose instruction is the agent's, then its partner. */
  protected abstract predictorPair(): readonly [Predict, Predict];

  /**
   * The agent's instruction: the first predictor's. Setting it sets both, since both work on the
   * same task; how each one works is carried by its field descriptions, not lost with it.
   */
  get instruction(): string {
    return this.predictorPair()[0].instruction;
  }

  set instruction(text: string) {
    for (const p of this.predictorPair()) p.instruction = text;
  }

  /** Runs the agent with its configured LM and the call's sampling options applying to its inner predictors. */
  async forward(inputs: InputOf<I>, options: CallOptions = {}): Promise<R> {
    // Applies this agent's configured LM and the call's sampling options to its inner predictors
    // when forward is called directly (`call` has already scoped them).
    return withCallSampling(options, () => withModuleLM(this.config.lm, () => this.run(inputs, options)));
  }

  /** The agent's own loop (ReAct, CodeAct, ProgramOfThought implement it); `forward` wraps it. */
  protected abstract run(inputs: InputOf<I>, options: CallOptions): Promise<R>;
}

/** What ReAct and CodeAct are configured with alike. */
export interface StepLoopOptions {
  maxIterations?: number;
  maxObservationChars?: number;
}

/**
 * An agent that calls its `step` predictor in a loop and then its `extract` predictor, which turns
 * the trajectory into the task's outputs (ReAct, CodeAct).
 */
export abstract class StepExtractAgent<I extends Shape, O extends Shape, R> extends PredictorPairAgent<I, O, R> {
  readonly signature: SignatureClass<I, O>;
  /** Chooses the next step from the task inputs and the trajectory. */
  abstract step: Predict;
  /** Turns the task inputs and the trajectory into the signature's outputs. */
  abstract extract: Predict;
  readonly maxIterations: number;
  readonly maxObservationChars: number;
  protected abstract readonly toolsByName: Map<string, AgentTool>;

  protected constructor(agent: string, signature: SignatureClass<I, O>, options: StepLoopOptions, defaultMaxIterations: number) {
    super();
    // The checks (agent-base-setup.ts) run before any field is set, as they did here.
    const limits = stepLoopSetup(agent, signature, options, defaultMaxIterations);
    this.signature = signature;
    this.maxIterations = limits.maxIterations;
    this.maxObservationChars = limits.maxObservationChars;
  }

  protected predictorPair(): readonly [Predict, Predict] {
    return [this.step, this.extract];
  }

  /** The tools this agent can call, in the order given. */
  get tools(): AgentTool[] {
    return [...this.toolsByName.values()];
  }

  /**
   * The step predictor's demos followed by the extractor's. Setting sends each demo to the predictor
   * it was written for: demos whose outputs are step fields to `step`, demos of the task's own
   * outputs to `extract`. The array returned is a view: a change made in it (`agent.demos[0] = x`,
   * `push`, `splice`, as optimizers do) is sent on like an assignment, so no prompt keeps a demo
   * that was replaced.
   */
  get demos(): FewShotExample[] {
    return stepExtractDemos(this);
  }

  set demos(demos: FewShotExample[]) {
    assignStepExtractDemos(this, demos);
  }
}
