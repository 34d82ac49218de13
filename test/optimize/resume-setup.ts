import { MIPROv2, Predict } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { candidateInstructions, makeExamples, proposals, taskModel, Topic } from "./task.js";

export const train = makeExamples(30, 21, "train");
export const val = makeExamples(40, 22, "val");

/** The optimization the resume test interrupts and resumes: the same seed and options every time. */
export async function runOptimization(o: { latencyMs?: number; resume?: string } = {}) {
  const lm = taskModel({ latencyMs: o.latencyMs });
  const promptModel = new ScriptedLM(proposals(candidateInstructions(3)));
  const mipro = new MIPROv2({ kDemos: 3, mode: "light", seed: 11, promptModel, concurrency: 4 });
  const tuned = await mipro.compile({
    moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val, resume: o.resume,
  });
  return { tuned, run: mipro.lastRun!, taskCalls: lm.requests.length, promptCalls: promptModel.requests.length };
}
