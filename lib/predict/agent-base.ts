import { withModuleLM } from "../config.js";
import { Module, type CallOptions } from "../module.js";
import type { InputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { demoFits } from "./agent-signature.js";
import type { AgentTool } from "./agent-tools.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Predict } from "./predict.js";

/**
 * An agent made of a `step` predictor that it calls in a loop and an `extract` predictor that turns
 * the trajectory into the task's outputs (ReAct, CodeAct). Both are ordinary predictors, so
 * `namedPredictors()` lists them and optimizers tune them.
 */
export abstract class StepExtractAgent<I extends Shape, O extends Shape, R> extends Module<InputOf<I>, R> {
  abstract readonly signature: SignatureClass<I, O>;
  /** Chooses the next step from the task inputs and the trajectory. */
  abstract step: Predict;
  /** Turns the task inputs and the trajectory into the signature's outputs. */
  abstract extract: Predict;
  protected abstract readonly toolsByName: Map<string, AgentTool>;

  /** The tools this agent can call, in the order given. */
  get tools(): AgentTool[] {
    return [...this.toolsByName.values()];
  }

  /**
   * The agent's instruction: the step predictor's. Setting it sets the extractor's too, since both
   * work on the same task; how the loop works is carried by the field descriptions, not lost with it.
   */
  get instruction(): string {
    return this.step.instruction;
  }

  set instruction(text: string) {
    this.step.instruction = text;
    this.extract.instruction = text;
  }

  /**
   * The step predictor's demos followed by the extractor's. Setting sends each demo to the predictor
   * it was written for: demos whose outputs are step fields to `step`, demos of the task's own
   * outputs to `extract`. Assign a new array rather than pushing into the one returned.
   */
  get demos(): FewShotExample[] {
    return [...this.step.demos, ...this.extract.demos];
  }

  set demos(demos: FewShotExample[]) {
    const stepShape = this.step.compiledSignature.outputShape;
    this.step.demos = demos.filter((d) => demoFits(d, stepShape));
    this.extract.demos = demos.filter((d) => !demoFits(d, stepShape));
  }

  async forward(inputs: InputOf<I>, options: CallOptions = {}): Promise<R> {
    // Applies this agent's configured LM to its inner predictors when forward is called directly.
    return withModuleLM(this.config.lm, () => this.run(inputs, options));
  }

  protected abstract run(inputs: InputOf<I>, options: CallOptions): Promise<R>;
}
