// MIPROv2.estimate's work, loaded the first time a MIPROv2 estimates (see MIPROv2.estimate), so
// `import "typelm"` does not compile it: the split, the program's calls and the proposer's calls priced.
import { jsonWithMediaLabels } from "../media/label.js";
import { resolveLM } from "../config.js";
import type { SignatureClass } from "../signature/signature.js";
import { checkExamples } from "./examples.js";
import { tunablePredictors } from "./options.js";
import { programCallUsage, signatureCallTokens, totalUsage, type UsageEstimate } from "./estimate.js";
import { programStructure } from "./propose.js";
import { proposalSignatures, TIPS } from "./proposal-signatures.js";
import { splitExamples } from "./mipro-split.js";
import type { CompileArgs, MIPROv2 } from "./mipro.js";

/** What `mipro.estimate(args)` resolves with (see MIPROv2.estimate). */
export function estimateMIPRO(mipro: MIPROv2, args: Omit<CompileArgs, "resume">): UsageEstimate {
  const predictors = tunablePredictors("MIPROv2", args.moduleInstance);
  const train = checkExamples(args.trainingExamples, "trainingExamples", "MIPROv2");
  const given = args.validationExamples === undefined ? undefined : checkExamples(args.validationExamples, "validationExamples", "MIPROv2");
  const kDemos = mipro.options.kDemos ?? 4;
  const { pool, val } = splitExamples(train, given, mipro.options.seed ?? 0, kDemos);
  const b = mipro.budget(predictors.length, pool.length, val.length);
  const P = predictors.length;
  const E = Math.ceil(b.trials / b.fullEvalEvery);
  const demos = Object.fromEntries(predictors.map(([path]) => [path, pool.slice(0, kDemos).map((e) => e.example)]));
  // With batch, the baseline and full evaluations are priced at the batch price; bootstrap and minibatches live.
  const batch = mipro.options.batch !== undefined && mipro.options.batch !== false;
  const liveRuns = b.bootstrapRuns + b.trials * b.minibatchSize + (batch ? 0 : b.validationSize * (1 + E));
  const batchRuns = batch ? b.validationSize * (1 + E) : 0;
  const usage = (runs: number, inBatch: boolean) => runs === 0 ? [] : programCallUsage({ program: args.moduleInstance, examples: val.map((e) => e.example), calls: P * runs, demos })
    .map((u) => ({ ...u, batch: inBatch }));
  const task = [...usage(liveRuns, false), ...usage(batchRuns, true)];
  const promptModel = mipro.options.promptModel ?? resolveLM(undefined, args.moduleInstance.config.lm);
  const blocks = (n: number) => pool.slice(0, n).map((e) => `Input: ${jsonWithMediaLabels(e.example.input)}\nOutput: ${jsonWithMediaLabels(e.example.output)}`).join("\n\n");
  const structure = programStructure(args.moduleInstance);
  const text = "x".repeat(400); // a paragraph of the proposer's own prose (summary, descriptions)
  const one = (signature: SignatureClass, values: Record<string, unknown>, outputs: Record<string, unknown>, calls: number) => {
    const t = signatureCallTokens({ signature, lm: promptModel, values, outputs });
    return { lm: promptModel, calls, inputTokens: calls * t.inputTokens, outputTokens: calls * t.outputTokens };
  };
  const observeCalls = Math.ceil(Math.min(pool.length, 20) / 10);
  const { ObserveDataset, SummarizeDataset, DescribeProgram, DescribeModule, ProposeInstruction } = proposalSignatures();
  const proposer = [
    one(ObserveDataset, { examples: blocks(10), priorObservations: text }, { observations: text }, observeCalls),
    one(SummarizeDataset, { observations: text }, { summary: text }, 1),
    one(DescribeProgram, { programStructure: structure, programExample: blocks(1) }, { programDescription: text }, 1),
    one(DescribeModule, { programStructure: structure, programDescription: text, programExample: blocks(1), module: structure }, { moduleDescription: text }, P),
    one(ProposeInstruction, {
      datasetSummary: text, programStructure: structure, programDescription: text, predictor: structure, moduleDescription: text,
      taskDemos: blocks(3), basicInstruction: predictors[0]![1].instruction, tip: TIPS.description!,
    }, { proposedInstruction: text }, P * Math.max(0, b.candidates - 1)),
  ];
  return totalUsage([...task, ...proposer]);
}

