export { ScriptedLM } from "./scripted-lm.js";
export type { ScriptedLMOptions, ScriptedReplies, ScriptedReply, ScriptedRequest } from "./scripted-lm.js";
