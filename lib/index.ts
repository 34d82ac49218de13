// The public names of typelm. Everything not exported here is internal.
export { Signature } from "./signature/signature.js";
export type { Shape, SignatureClass, DefinedSignature, InputShapeOf, OutputShapeOf } from "./signature/signature.js";
export type { InputOf, OutputOf, SignatureInputs, SignatureOutputs } from "./signature/infer.js";
export { t, Temporal } from "./signature/temporal.js";
export { Image, Audio, Document, MediaValue } from "./media/media.js";
export type { MediaKind, MediaSource } from "./media/media.js";

export { configure, withLM, resetConfiguration } from "./config.js";
export type { GlobalConfig, ModuleConfig, LogLevel } from "./config.js";
export { Strategy, StrategyInterface } from "./strategy/strategy.js";
export { extractJson } from "./strategy/extract-json.js";

export { Prompt } from "./prompt/prompt.js";
export type { PromptOptions } from "./prompt/prompt.js";

export { Module } from "./module.js";
export type { CallOptions, ModuleState, PredictorState, StreamOptions } from "./module.js";
export { PredictionStream } from "./stream/events.js";
export type { StreamEvent, DeepPartial } from "./stream/events.js";
export { Predict } from "./predict/predict.js";
export type { PredictOptions } from "./predict/predict.js";
export { ChainOfThought } from "./predict/chain-of-thought.js";
export { Prediction } from "./predict/prediction.js";
export type { PredictionMeta } from "./predict/prediction.js";
export { FewShotExample } from "./prompt/few-shot.js";
export { ReAct } from "./predict/react.js";
export type { ReActStep, ReActOptions, ReActResult } from "./predict/react.js";
export { CodeAct } from "./predict/codeact.js";
export type { CodeActStep, CodeActOptions, CodeActResult } from "./predict/codeact.js";
export { ProgramOfThought } from "./predict/program-of-thought.js";
export type { ProgramOfThoughtOptions, ProgramOfThoughtResult, ProgramAttempt, ProgramTrace } from "./predict/program-of-thought.js";
export type { AgentTool } from "./predict/agent-tools.js";

export { Tool, tool } from "./tools/tool.js";
export type { ToolOutcome, ToolDefinition, ToolArgs, ToolParameterSchema } from "./tools/tool.js";
export { Toolset, toolEntry } from "./tools/toolset.js";
export type { ToolsetEntry } from "./tools/toolset.js";
export { CalculatorTool } from "./tools/calculator.js";
export { MemoryToolset } from "./tools/memory-toolset.js";
export { Memory } from "./memory/memory.js";
export type { MemoryConfig } from "./memory/memory.js";
export { MemoryManager } from "./memory/manager.js";
export type { MemoryRecord, MemorySearch, MemoryStore, NewMemory, MemoryChanges } from "./memory/record.js";
export { InMemoryStore } from "./memory/in-memory-store.js";
export { RedisStore } from "./memory/redis-store.js";
export type { RedisClient } from "./memory/redis-store.js";
export { Sandbox } from "./sandbox/sandbox.js";
export type { SandboxOptions, SandboxResult, SandboxTool } from "./sandbox/sandbox.js";

export { LM } from "./lm/lm.js";
export type { LMOptions, LMPolicy } from "./lm/lm.js";
export type { CacheOptions } from "./lm/cache.js";
export { estimateCost, type PricedUsage } from "./lm/prices.js";
export { BaseLM } from "./lm/base.js";
export type { LanguageModel, LMRequest, LMResponse, ChatMessage, SchemaFormat, DataFormat, TokenUsage, ReasoningOption } from "./lm/types.js";
export type { MediaAttachment } from "./lm/types.js";
export type { ChatOptions } from "./lm/types.js";

export { Evaluation } from "./evaluate/evaluation.js";
export type { EvaluationOptions, EvaluateArgs, EvaluateInput, ReportOf } from "./evaluate/evaluation.js";
export { EvaluationReport } from "./evaluate/report.js";
export type { PromptCacheUsage } from "./evaluate/prompt-cache.js";
export type { ConfusionMatrix, EvaluationSummary } from "./evaluate/report.js";
export { compare } from "./evaluate/compare.js";
export { rescore } from "./evaluate/rescore.js";
export type { RescoreOptions } from "./evaluate/rescore.js";
export type { Comparison, CompareOptions, ComparableReport } from "./evaluate/compare.js";
export type { CiMethod, Interval, PairedTest } from "./evaluate/stats/methods.js";
export type { LabelStats } from "./evaluate/metrics.js";
export type { ExampleOutcome } from "./evaluate/run-example.js";
export type { ModelCall, UsageTotals } from "./lm/usage-scope.js";
export type { BuiltinMetricName, MetricSpec } from "./evaluate/scoring.js";
export { defaultMetric } from "./evaluate/metric.js";
export type { Metric, MetricObject, MetricResult, MetricScore } from "./evaluate/metric.js";
export type { JudgeUsage } from "./evaluate/report.js";

export { Judge } from "./judge/judge.js";
export type { JudgeOptions, JudgeScale, JudgeInput, JudgeOutput } from "./judge/judge.js";
export { SemanticF1 } from "./judge/semantic-f1.js";
export type { SemanticF1Options } from "./judge/semantic-f1.js";
export { calibrate } from "./judge/calibrate.js";
export type { AnnotationSource, Calibration } from "./judge/calibrate.js";
export { PairwiseJudge } from "./judge/pairwise.js";
export type { PairwiseJudgeOptions, PairwiseInput, PairwiseOutput, PairwiseRow, PairwiseComparison, PairwiseReport } from "./judge/pairwise.js";

export { MIPROv2 } from "./optimize/mipro.js";
export type { MIPROv2Options, CompileArgs, MIPROBudget } from "./optimize/mipro.js";
export type { MIPROMode } from "./optimize/budget.js";
export { SimpleOptimizer } from "./optimize/simple.js";
export type { SimpleOptimizerOptions } from "./optimize/simple.js";
export { GEPA } from "./optimize/gepa/gepa.js";
export type { GEPAOptions, GEPACompileArgs } from "./optimize/gepa/gepa.js";
export type { GEPAMode } from "./optimize/gepa/budget.js";
export type { UsageEstimate } from "./optimize/estimate.js";

export { LabStore } from "./store/lab-store.js";
export type { RunFilter, StartRun, FinishRun } from "./store/lab-rows.js";
export type { LabStoreOptions, Lab, PostgresUrl } from "./store/lab-store.js";
export type { PostgresLabStore } from "./store/pg-lab-store.js";
export { Registry } from "./store/registry/registry.js";
export type { RegistryOptions, StoreOptions, LoadOptions, StoredVersion } from "./store/registry/registry.js";
export type {
  RunKind, RunStatus, RunSummary, EvaluationRow, EvaluationRun, Trial, OptimizationRun, LabRun, RegistryVersion,
} from "./store/records.js";

export { loadDataset, loadExperimentFile, runExperiment } from "./lab/entry.js";
export type { Dataset, DatasetInfo } from "./lab/dataset/load.js";
export { defineExperiment } from "./lab/experiment/define.js";
export type { LoadedExperiment } from "./lab/experiment/load.js";
export type { RunExperimentOptions, ExperimentRun, ModelRun, ModelRunResult, Manifest, SeedResult } from "./lab/experiment/run.js";
export type { LoadDatasetOptions } from "./lab/dataset/load.js";
export type {
  ExperimentBase, ExperimentConfig, ExperimentOptimizerChoice, ExperimentDefinition, ExperimentOptimizer, ExperimentSplits, OptimizerContext, OptimizerName, ProgramContext,
} from "./lab/experiment/define.js";

export { Instrumentation } from "./instrument/bus.js";
export type { TypelmEvent } from "./instrument/bus.js";

export {
  TypelmError, ValidationError, ConfigurationError, LMError, OutputError, ToonDecodeError, MaxIterationsError,
} from "./errors.js";

// Many calls at once: program.batch (lib/batch/).
export type { BatchCallOptions, BatchResult, BatchVia } from "./batch/options.js";
export { MCPClient } from "./mcp/client.js"; export { MCPTool, type MCPCaller, type MCPToolDescription } from "./mcp/tool.js"; export type { MCPToolResult } from "./mcp/result.js"; export type { MCPConnectOptions, MCPStdioOptions, MCPHttpOptions, MCPCommonOptions } from "./mcp/options.js";
export type { ToolCalling } from "./predict/react.js"; export type { ToolCall, ToolDefinition as LMToolDefinition, ToolExchange, ToolResult } from "./lm/tool-calls.js";

// Production traces (c.traces): the writer loads at the first sampled call (lib/traces/).
export { flushTraces, recordFeedback, traceCounters } from "./trace-call.js";
export type { TraceFeedback } from "./trace-call.js";
export type { TracesConfig } from "./config.js";
