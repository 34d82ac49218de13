// A small labelling task for optimizer tests, generated without the library's random helpers.
import { afterEach, beforeEach } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { configure, resetConfiguration } from "../../lib/config.js";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { FewShotExample, Predict, Signature } from "../../lib/index.js";
import type { ScriptedRequest } from "../../lib/testing/index.js";
import { SimulatedLM } from "../../lib/testing/index.js";

export class Topic extends Signature {
  static override description = "Label the text.";
  static override input = { text: z.string() };
  static override output = { label: z.enum(["animal", "fruit", "tool"]) };
}

export const KEYWORDS: Record<string, string[]> = {
  animal: ["otter", "heron", "badger", "lynx", "walrus", "gecko"],
  fruit: ["mango", "plum", "lychee", "quince", "guava", "kiwi"],
  tool: ["hammer", "chisel", "wrench", "pliers", "trowel", "awl"],
};
const FILLER = ["red", "big", "old", "new", "small", "blue", "green", "tiny", "wet", "dry", "odd", "warm"];

/** A linear congruential generator, so the data does not depend on the code under test. */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

/** A label, one of its keywords, and a filler word picker, all drawn from `next`. */
export function drawKeyword(next: () => number): { label: string; key: string; filler: () => string } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const label = pick(Object.keys(KEYWORDS));
  return { label, key: pick(KEYWORDS[label]!), filler: () => pick(FILLER) };
}

export function makeExamples(n: number, seed: number, prefix: string): FewShotExample[] {
  const next = lcg(seed);
  return Array.from({ length: n }, (_, i) => {
    const { label, key, filler: f } = drawKeyword(next);
    return new FewShotExample({ input: { text: `${f()} ${key} ${f()} ${f()}` }, output: { label }, id: `${prefix}-${i}` });
  });
}

export function labelOf(text: string): string {
  for (const [label, words] of Object.entries(KEYWORDS)) if (words.some((w) => text.split(" ").includes(w))) return label;
  return "animal";
}

export const RULE_PHRASE = "name the category of the keyword";

/** The task model: answers correctly only with the rule phrase in the instruction (else nearest demo / first label). */
export function taskModel(options: { promptBlind?: boolean; latencyMs?: number } = {}): SimulatedLM {
  return new SimulatedLM({ ...options, rules: [{ phrase: RULE_PHRASE, answer: (inputs) => ({ label: labelOf(String(inputs.text)) }) }] });
}

/** A proposer reply function handing out `instructions` in order (cycling) to the ProposeInstruction step. */
export function proposals(instructions: string[]): (request: ScriptedRequest) => Record<string, unknown> {
  let next = 0;
  return (request) => {
    if (request.signature?.name === "ProposeInstruction") return { proposedInstruction: instructions[next++ % instructions.length]! };
    return { observations: "Short texts with one keyword each.", summary: "Texts labelled by topic.", programDescription: "Labels a text." };
  };
}

/** Candidate instructions with the rule phrase in position `at` (0-based among the proposals). */
export function candidateInstructions(at: number, count = 5): string[] {
  return Array.from({ length: count }, (_, i) =>
    i === at ? `Read the text, then ${RULE_PHRASE} it mentions.` : `Label the text carefully (variant ${i + 1}).`);
}

/** Each test gets its own lab file (configured as c.lab); returns a getter for its path. */
export function useTempLab(): () => string {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "typelm-optimize-"));
    configure((c) => { c.lab = { path: path.join(dir, "lab.sqlite") }; });
  });
  afterEach(() => {
    resetConfiguration();
    Instrumentation.reset();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => path.join(dir, "lab.sqlite");
}

/** Accuracy of one configuration on held-out examples, by calling a predictor directly. */
export async function heldOut(lm: SimulatedLM, instruction: string, demos: readonly FewShotExample[], examples: readonly FewShotExample[]): Promise<number> {
  const p = new Predict(Topic, { instruction, demos: [...demos] });
  let right = 0;
  for (const ex of examples) if ((await p.call(ex.input as { text: string }, { lm })).label === ex.output.label) right++;
  return right / examples.length;
}
