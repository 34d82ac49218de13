import type { LanguageModel } from "../lm/types.js";
import type { Module } from "../module.js";
import { jsonWithMediaLabels } from "../media/label.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { Predict } from "../predict/predict.js";
import type { DemoSets } from "./bootstrap.js";
import { proposalSignatures, TIPS } from "./proposal-signatures.js";
import { describeType } from "../signature/type-text.js";
import type { Random } from "../random.js";
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
  /** Temperature of each instruction proposal (default 1.0): proposals are samples, not one answer. */
  temperature?: number;
}

export interface Proposals {
  /** Per predictor path: candidate instructions, index 0 the current one. */
  instructions: Record<string, string[]>;
  tips: Record<string, string[]>;
  /** Per predictor path: the rollout id of each proposal (null for candidate 0, the current instruction). */
  rolloutIds: Record<string, (number | null)[]>;
  datasetSummary: string;
  programDescription: string;
  /** Per predictor path: its role in the program, as the prompt model described it. */
  moduleDescriptions: Record<string, string>;
  /** `path #i: Name: message` of proposals that failed or came back empty (the candidate keeps the current instruction). */
  failures: string[];
}

/** Demos a proposal shows of its demo set and the sets after it (DSPy's num_demos_in_context). */
const DEMOS_IN_CONTEXT = 3;

function block(example: { input: Record<string, unknown>; output: Record<string, unknown> }): string {
  return `Input: ${jsonWithMediaLabels(example.input)}\nOutput: ${jsonWithMediaLabels(example.output)}`;
}

/** The program's shape as text: its class and each predictor with its full signature. */
export function programStructure(program: Module): string {
  const lines = [`${program.constructor.name}`];
  for (const [path, p] of program.namedPredictors()) lines.push(indent(`${path}: ${describePredictor(p)}`, "  "));
  return lines.join("\n");
}

function indent(text: string, by: string): string {
  return text.split("\n").map((l) => by + l).join("\n");
}

type FieldLike = { name: string; schema: Parameters<typeof describeType>[0]; description: string | undefined; required: boolean };

function fieldLine(f: FieldLike): string {
  const optional = f.required ? "" : " (optional)";
  return `- ${f.name}: ${describeType(f.schema)}${optional}${f.description ? ` — ${f.description}` : ""}`;
}

/**
 * A predictor as the proposer sees it: its class and signature name, the signature's description,
 * the instruction in force, and every input and output field with its type (enum values spelled
 * out), whether it is optional, and its description.
 */
export function describePredictor(p: Module & { instruction?: string }): string {
  const sig = (p as { compiledSignature?: { name: string; description: string; inputs: FieldLike[]; outputs: FieldLike[] } }).compiledSignature;
  if (sig === undefined) return p.constructor.name;
  const lines = [`${p.constructor.name}(${sig.name})`];
  if (sig.description !== "" && sig.description !== p.instruction) lines.push(`signature description: ${sig.description}`);
  if (p.instruction !== undefined) lines.push(`instruction: ${p.instruction}`);
  lines.push("inputs:", ...sig.inputs.map((f) => `  ${fieldLine(f)}`), "outputs:", ...sig.outputs.map((f) => `  ${fieldLine(f)}`));
  return lines.join("\n");
}

/** Up to `DEMOS_IN_CONTEXT` demos from set `i` and the sets after it (wrapping), none for set 0 (as DSPy does). */
function taskDemos(sets: readonly FewShotExample[][], i: number): string {
  if (i === 0 || sets.length === 0) return "";
  const shown: FewShotExample[] = [];
  for (let k = 0; k < sets.length && shown.length < DEMOS_IN_CONTEXT; k++) {
    for (const d of sets[(i + k) % sets.length]!) {
      if (shown.length >= DEMOS_IN_CONTEXT) break;
      if (!shown.some((s) => s.id !== undefined && s.id === d.id)) shown.push(d);
    }
  }
  return shown.map(block).join("\n\n");
}

/**
 * Proposes instruction candidates grounded in the data, the program and its demos (MIPROv2 step 2):
 * ⌈min(n, 20)/10⌉ observation calls and one summary call describe the dataset, one call describes the
 * program and one per predictor its role (DSPy's DescribeProgram and DescribeModule), then one call
 * per new candidate per predictor writes an instruction from the predictor's full signature, its
 * role, a random tip and up to 3 demos of demo set i and the sets after it. Each proposal is a sample:
 * it runs at `temperature` (1.0) with a rollout id of its own drawn from the seeded stream, so N
 * proposals are N distinct requests even with the response cache on, and a rerun with the same seed
 * asks the same N. A proposal that fails or comes back empty keeps the current instruction and is
 * listed in `failures`; the summary and description steps failing leave their text empty.
 */
export async function proposeInstructions(o: ProposeOptions): Promise<Proposals> {
  const { ObserveDataset, SummarizeDataset, DescribeProgram, DescribeModule, ProposeInstruction } = proposalSignatures();
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
  const programExample = block(o.trainingExamples[0]!);
  const programDescription = await run(
    "program description",
    async () => (await new Predict(DescribeProgram).call({ programStructure: structure, programExample }, call)).programDescription,
    "",
  );
  const tipNames = Object.keys(TIPS);
  const temperature = o.temperature ?? 1;
  const instructions: Record<string, string[]> = {};
  const tips: Record<string, string[]> = {};
  const rolloutIds: Record<string, (number | null)[]> = {};
  const moduleDescriptions: Record<string, string> = {};
  for (const [path, predictor] of o.program.namedPredictors()) {
    const predictorText = `${path}: ${describePredictor(predictor)}`;
    const moduleDescription = await run(
      `${path} module description`,
      async () => (await new Predict(DescribeModule).call({ programStructure: structure, programDescription, programExample, module: predictorText }, call)).moduleDescription,
      "",
    );
    moduleDescriptions[path] = moduleDescription;
    const list = [predictor.instruction];
    const used = ["(current)"];
    const ids: (number | null)[] = [null];
    const sets = o.demoSets[path] ?? [[]];
    for (let i = 1; i < o.numCandidates; i++) {
      const tip = o.random.pick(tipNames);
      const rolloutId = o.random.int(1_000_000_000);
      const proposed = await run(`${path} #${i}`, async () => {
        const r = await new Predict(ProposeInstruction).call({
          datasetSummary, programStructure: structure, programDescription, predictor: predictorText, moduleDescription,
          taskDemos: taskDemos(sets, i % Math.max(1, sets.length)), basicInstruction: predictor.instruction, tip: TIPS[tip]!,
        }, { lm: o.lm, temperature, rolloutId });
        return r.proposedInstruction.trim();
      }, "");
      if (proposed === "") {
        if (!failures.some((f) => f.startsWith(`${path} #${i}:`))) failures.push(`${path} #${i}: empty proposal`);
        list.push(predictor.instruction);
      } else {
        list.push(proposed);
      }
      used.push(tip);
      ids.push(rolloutId);
    }
    instructions[path] = list;
    tips[path] = used;
    rolloutIds[path] = ids;
  }
  return { instructions, tips, rolloutIds, datasetSummary, programDescription, moduleDescriptions, failures };
}
