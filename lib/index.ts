// The public names of typelm. Everything not exported here is internal.
export { Signature } from "./signature/signature.js";
export type { Shape, SignatureClass, InputShapeOf, OutputShapeOf } from "./signature/signature.js";
export type { InputOf, OutputOf, SignatureInputs, SignatureOutputs } from "./signature/infer.js";
export { t, Temporal } from "./signature/temporal.js";

export { configure, withLM, resetConfiguration } from "./config.js";
export type { GlobalConfig, ModuleConfig, LogLevel } from "./config.js";
export { Strategy, StrategyInterface } from "./strategy/strategy.js";
export { extractJson } from "./strategy/extract-json.js";

export { Prompt } from "./prompt/prompt.js";
export type { PromptOptions } from "./prompt/prompt.js";

export { Module } from "./module.js";
export type { CallOptions, ModuleState, PredictorState } from "./module.js";
export { Predict } from "./predict/predict.js";
export type { PredictOptions } from "./predict/predict.js";
export { ChainOfThought } from "./predict/chain-of-thought.js";
export { Prediction } from "./predict/prediction.js";
export type { PredictionMeta } from "./predict/prediction.js";
export { FewShotExample } from "./predict/few-shot.js";

export { BaseLM } from "./lm/base.js";
export type { LanguageModel, LMRequest, LMResponse, ChatMessage, SchemaFormat, DataFormat, TokenUsage } from "./lm/types.js";

export { Instrumentation } from "./instrument/bus.js";
export type { TypelmEvent } from "./instrument/bus.js";

export {
  TypelmError, ValidationError, ConfigurationError, LMError, OutputError, ToonDecodeError, MaxIterationsError,
} from "./errors.js";
