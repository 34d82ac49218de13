/**
 * The bodies behind the agents' base classes (lib/predict/agent-base.ts): the step-loop options a
 * ReAct or CodeAct constructor checks, and the mapping of agent-level demos onto the `step` and
 * `extract` predictors. Deferred (scripts/deferred-modules.mjs): loaded at the first agent built, so
 * `import "typelm"` parses only the classes' facades.
 */
import type { FewShotExample } from "../prompt/few-shot.js";
import type { SignatureClass } from "../signature/signature.js";
import type { StepLoopOptions } from "./agent-base.js";
import { positiveInt } from "./agent-options.js";
import { demoFits, rejectOutputs } from "./agent-signature.js";
import type { Predict } from "./predict.js";

/** What of a ReAct or CodeAct agent its demos go through: its two predictors and its `demos` property. */
export interface StepExtractDemos {
  readonly step: Predict;
  readonly extract: Predict;
  demos: FewShotExample[];
}

/** A step-loop agent's signature and options checked: its iteration and observation limits. */
export function stepLoopSetup(
  agent: string,
  signature: SignatureClass,
  options: StepLoopOptions,
  defaultMaxIterations: number,
): { maxIterations: number; maxObservationChars: number } {
  // The run's steps are returned as `history`; an output of that name would be overwritten.
  rejectOutputs(agent, signature, ["history"]);
  return {
    maxIterations: positiveInt(agent, "maxIterations", options.maxIterations, defaultMaxIterations),
    maxObservationChars: positiveInt(agent, "maxObservationChars", options.maxObservationChars, 4000),
  };
}

/**
 * The step predictor's demos followed by the extractor's, as a view: a change made in it is sent on
 * like an assignment to `agent.demos`.
 */
export function stepExtractDemos(agent: StepExtractDemos): FewShotExample[] {
  const view = [...agent.step.demos, ...agent.extract.demos];
  const sendOn = (done: boolean): boolean => {
    agent.demos = view;
    return done;
  };
  return new Proxy(view, {
    set: (target, key, value) => sendOn(Reflect.set(target, key, value)),
    deleteProperty: (target, key) => sendOn(Reflect.deleteProperty(target, key)),
  });
}

/** Sends each demo to the predictor it was written for: step-field demos to `step`, the rest to `extract`. */
export function assignStepExtractDemos(agent: StepExtractDemos, demos: FewShotExample[]): void {
  const stepShape = agent.step.compiledSignature.outputShape;
  agent.step.demos = demos.filter((d) => demoFits(d, stepShape));
  agent.extract.demos = demos.filter((d) => !demoFits(d, stepShape));
}
