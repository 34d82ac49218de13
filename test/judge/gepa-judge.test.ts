import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { GEPA, Judge, Predict, configure, resetConfiguration } from "../../lib/index.js";
import { ScriptedLM, type ScriptedRequest } from "../../lib/testing/index.js";
import { makeExamples, RULE_PHRASE, taskModel, Topic } from "../optimize/task.js";
import { reflector } from "../optimize/gepa-task.js";

beforeEach(() => configure((c) => { c.lab = false; }));
afterEach(() => resetConfiguration());

/** A reference judge whose rationale, on a wrong label, names the rule the label follows. */
function judgeReply(req: ScriptedRequest): Record<string, unknown> {
  const got = (req.inputs?.["answer"] as { label: string }).label;
  const want = (req.inputs?.["reference"] as { label: string }).label;
  if (got === want) return { rationale: "The label is right.", verdict: "pass" };
  return { rationale: `label: expected "${want}", got "${got}". Rule for label: ${RULE_PHRASE}.`, verdict: "fail" };
}

describe("a Judge as GEPA's metric", () => {
  it("hands GEPA its rationale as feedback: the reflection reads the judge's words and the program gains the rule", async () => {
    const program = new Predict(Topic).configure((c) => { c.lm = taskModel(); });
    const judgeLM = new ScriptedLM(judgeReply);
    const judge = new Judge({ name: "correct", criteria: "The label is the text's topic.", reference: true, lm: judgeLM });
    const reflection = new ScriptedLM(reflector());
    const gepa = new GEPA({ metric: judge.metric, mode: "light", reflectionLM: reflection, seed: 7 });
    const tuned = await gepa.compile({ moduleInstance: program, trainingExamples: makeExamples(24, 1, "train"), validationExamples: makeExamples(12, 2, "val") });

    expect(tuned.instruction).toContain(RULE_PHRASE);
    expect(program.instruction).not.toContain(RULE_PHRASE);
    // The reflection prompt carried the judge's rationale word for word.
    const reflected = reflection.requests.map((r) => r.messages.map((m) => m.content).join("\n")).join("\n");
    expect(reflected).toMatch(/label: expected \\"\w+\\", got \\"\w+\\"\. Rule for label/);
    expect(judgeLM.requests.length).toBeGreaterThan(0);
    expect(gepa.lastRun!.summary.gain).toBeGreaterThan(0);
  });
});
