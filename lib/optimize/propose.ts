import type { LanguageModel } from "../lm/types.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { Predict } from "../predict/predict.js";
import type { DemoSets } from "./bootstrap.js";
import { DescribeProgram, ObserveDataset, ProposeInstruction, SummarizeDataset, TIPS } from "./proposal-signatures.js";
import type { Random } from "./random.js";
import { describeError } from "../instrument/bus.js";

/** Training examples the dataset summary reads, and how many go into one observation call. */
const SUMMARY_EXAMPLES = 20;
const SUMMARY_BATCH = 10;

export interface ProposeOptions {
  program: Module;
  trainingExamples: readonly FewShotExample[];
  demoSets: DemoSets;
  /** Instruction candidates per predictor, the current instruction (index 0) included. */
  numCandidates: number;
  lm: LanguageModel;
  random: Random;
}

export interface Proposals {
  /** Per predictor path: candidate instructions, index 0 the current one. */
  instructions: Record<string, string[]>;
  tips: Record<string, string[]>;
  datasetSummary: string;
  programDescription: string;
  /** `path #i: Name: message` of proposals that failed or came back empty (the candidate keeps the current instruction). */
  failures: string[];
}

function block(example: { input: Record<string, unknown>; output: Record<string, unknown> }): string {
  return `Input: ${JSON.stringify(example.input)}\nOutput: ${JSON.stringify(example.output)}`;
}

/** The program's shape as text: its class and each predictor with its signature's fields. */
export function programStructure(program: Module): string {
  const lines = [`${program.constructor.name}`];
  for (const [path, p] of program.namedPredictors()) lines.push(`  ${path}: ${describePredictor(p)}`);
  return lines.join("\n");
}

function describePredictor(p: Module): string {
  const sig = (p as { compiledSignature?: { name: string; inputs: { name: string }[]; outputs: { name: string }[] } }).compiledSignature;
  if (sig === undefined) return p.constructor.name;
  return `${p.constructor.name}(${sig.name}: ${sig.inputs.map((f) => f.name).join(", ")} -> ${sig.outputs.map((f) => f.name).join(", ")})`;
}

/**
 * Proposes instruction candidates grounded in the data, the program and its demos (MIPROv2 step 2):
 * ⌈min(n, 20)/10⌉ observation calls and one summary call describe the dataset, one call describes the
 * program, then one call per new candidate per predictor writes an instruction with a random tip and
 * the demos of demo set (i mod sets). A proposal that fails or comes back empty keeps the current
 * instruction and is listed in `failures`; the summary steps failing leave their text empty.
 */
export async function proposeInstructions(o: ProposeOptions): Promise<Proposals> {
  const failures: string[] = [];
  const run = async <T>(what: string, fn: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      failures.push(`${what}: ${describeError(error)}`);
      return fallback;
    }
  };
  const call = { lm: o.lm };
  const sample = o.trainingExamples.slice(0, SUMMARY_EXAMPLES);
  let observations = "";
  for (let i = 0; i < sample.length; i += SUMMARY_BATCH) {
    const examples = sample.slice(i, i + SUMMARY_BATCH).map(block).join("\n\n");
    observations = await run("dataset observations", async () => {
      const r = await new Predict(ObserveDataset).call({ examples, priorObservations: observations }, call);
      return observations ? `${observations}\n${r.observations}` : r.observations;
    }, observations);
  }
  const datasetSummary = await run("dataset summary", async () => (await new Predict(SummarizeDataset).call({ observations }, call)).summary, "");
  const structure = programStructure(o.program);
  const first = o.trainingExamples[0]!;
  const programDescription = await run(
    "program description",
    async () => (await new Predict(DescribeProgram).call({ programStructure: structure, programExample: block(first) }, call)).programDescription,
    "",
  );
  const tipNames = Object.keys(TIPS);
  const instructions: Record<string, string[]> = {};
  const tips: Record<string, string[]> = {};
  for (const [path, predictor] of o.program.namedPredictors()) {
    const list = [predictor.instruction];
    const used = ["(current)"];
    const sets = o.demoSets[path] ?? [[]];
    for (let i = 1; i < o.numCandidates; i++) {
      const tip = o.random.pick(tipNames);
      const demos = sets[i % sets.length]!;
      const proposed = await run(`${path} #${i}`, async () => {
        const r = await new Predict(ProposeInstruction).call({
          datasetSummary, programStructure: structure, programDescription, predictor: `${path}: ${describePredictor(predictor)}`,
          taskDemos: demos.map(block).join("\n\n"), basicInstruction: predictor.instruction, tip: TIPS[tip]!,
        }, call);
        return r.proposedInstruction.trim();
      }, "");
      if (proposed === "") {
        if (!failures.some((f) => f.startsWith(`${path} #${i}:`))) failures.push(`${path} #${i}: empty proposal`);
        list.push(predictor.instruction);
      } else {
        list.push(proposed);
      }
      used.push(tip);
    }
    instructions[path] = list;
    tips[path] = used;
  }
  return { instructions, tips, datasetSummary, programDescription, failures };
}
