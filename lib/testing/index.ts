export { ScriptedLM } from "./scripted-lm.js";
export type { ScriptedLMOptions, ScriptedReplies, ScriptedReply, ScriptedRequest } from "./scripted-lm.js";
export { startFakeProvider } from "./fake-provider.js";
export type {
  FakeProvider, FakeRequest, FakeReply, FakeReplyValue, FakeReplyOptions, FakeUsage, FailOptions, FakeProviderOptions, FakeWire,
  FakeBatch, FakeBatchScript, FakeBatchLineMatch, FakeBatchWire, FakeStream, FakeStreamError, FakeStreamOptions,
} from "./fake-provider.js";
export { SimulatedLM } from "./simulated-lm.js";
export type { SimulatedLMOptions, SimulatedRule, SimulatedRequest } from "./simulated-lm.js";
export type { ChunkPacing } from "../lm/stream-text.js";
export type { FakeMediaPart } from "./fake-media.js";
export { toolCalls, FakeToolCalls } from "./fake-tools.js";
export type { FakeToolCallSpec, FakeToolResult } from "./fake-tools.js";
export { SimulatedShapesLM, shapesTable, simulatedCount, picturesIn, SHAPES_CAREFUL_PHRASE, SHAPES_PROPOSALS } from "./simulated-shapes.js";
export type { SimulatedShapesLMOptions, ShapesDecision } from "./simulated-shapes.js";
