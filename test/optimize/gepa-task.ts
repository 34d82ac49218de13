// A two-predictor task for GEPA tests: each predictor answers right only when its own rule is in its
// instruction, and the metric's feedback names the rule of each field it finds wrong.
import { z } from "zod";
import { FewShotExample, Module, Predict, Signature } from "../../lib/index.js";
import type { ScriptedRequest } from "../../lib/testing/index.js";
import { SimulatedLM } from "../../lib/testing/index.js";
import { readPrompt } from "../../lib/testing/read-prompt.js";
import { drawKeyword, labelOf, lcg, RULE_PHRASE, Topic } from "./task.js";

export const TONE_PHRASE = "loud when a word is in capitals";

export class Tone extends Signature {
  static override description = "Say how the text sounds.";
  static override input = { text: z.string() };
  static override output = { tone: z.enum(["calm", "loud"]) };
}

export class TopicAndTone extends Module {
  topic = new Predict(Topic);
  tone = new Predict(Tone);
  async forward({ text }: { text: string }) {
    const a = await this.topic.call({ text });
    const b = await this.tone.call({ text });
    return { label: a.label, tone: b.tone };
  }
}

export function makeToneExamples(n: number, seed: number, prefix: string): FewShotExample[] {
  const next = lcg(seed);
  return Array.from({ length: n }, (_, i) => {
    const { label, key, filler } = drawKeyword(next);
    const loud = next() < 0.5;
    const fillers = [0, 1, 2].map(filler);
    if (loud) fillers[1] = fillers[1]!.toUpperCase();
    return new FewShotExample({
      input: { text: `${fillers[0]} ${key} ${fillers[1]} ${fillers[2]}` }, output: { label, tone: loud ? "loud" : "calm" }, id: `${prefix}-${i}`,
    });
  });
}

const toneOf = (text: string) => (text.split(" ").some((w) => /[A-Z]/.test(w)) ? "loud" : "calm");

/** The task model: the topic rule answers the label, the tone rule the tone; otherwise the first enum value. */
export function twoRuleModel(): SimulatedLM {
  return new SimulatedLM({
    rules: [
      { phrase: RULE_PHRASE, answer: (inputs) => ({ label: labelOf(String(inputs.text)) }) },
      { phrase: TONE_PHRASE, answer: (inputs) => ({ tone: toneOf(String(inputs.text)) }) },
    ],
  });
}

/** Scores half a point per right field, and for each wrong field says what was expected and the rule it follows. */
export function feedbackMetric(example: FewShotExample, prediction: Record<string, unknown>) {
  const wrong: string[] = [];
  if (prediction.label !== example.output.label) {
    wrong.push(`label: expected "${String(example.output.label)}", got "${String(prediction.label)}". Rule for label: ${RULE_PHRASE}.`);
  }
  if (prediction.tone !== example.output.tone) {
    wrong.push(`tone: expected "${String(example.output.tone)}", got "${String(prediction.tone)}". Rule for tone: ${TONE_PHRASE}.`);
  }
  return { score: (2 - wrong.length) / 2, feedback: wrong.length === 0 ? "Both fields are right." : wrong.join(" ") };
}

/**
 * A reflection LM that reads only the prompt text it is sent: the output fields of the step (from
 * its "Generated outputs"), and in the feedback a "Rule for <field>: ..." line for one of them. It
 * appends that rule to the current instruction, or gives the current instruction back when it finds none.
 */
export function reflector(): (request: ScriptedRequest) => Record<string, unknown> {
  return (request) => {
    const inputs = readPrompt(request.messages).inputs as { currentInstruction: string; examplesWithFeedback: string };
    const text = inputs.examplesWithFeedback;
    const fields = new Set([...text.matchAll(/Generated outputs: (\{.*\})/g)].flatMap((m) => Object.keys(JSON.parse(m[1]!) as object)));
    for (const m of text.matchAll(/Rule for (\w+): ([^.]+)\./g)) {
      if (fields.has(m[1]!) && !inputs.currentInstruction.includes(m[2]!)) return { newInstruction: `${inputs.currentInstruction} Rule: ${m[2]}.` };
    }
    return { newInstruction: inputs.currentInstruction };
  };
}
