import { z } from "zod";
import { Signature } from "../signature/signature.js";
import { onFirstUse } from "../load-sync.js";

// The steps of the grounded instruction proposer (after DSPy's grounded_proposer.py), each its own
// signature so the proposer runs on any LM that can run a Predict.

/**
 * The proposer's signatures, defined the first time the proposer runs (their zod schemas cost start-up
 * time that most programs never need).
 */
export const proposalSignatures = onFirstUse(() => {
  /** Notes on one batch of training examples, building on earlier notes. */
  class ObserveDataset extends Signature {
    static override description =
      "Given several examples from a dataset, write observations about the task, the inputs, the outputs and any trends. " +
      "Build on the prior observations and add only what is new.";
    static override input = {
      examples: z.string().describe("examples from the dataset, one per block"),
      priorObservations: z.string().describe("observations made on earlier examples (may be empty)"),
    };
    static override output = { observations: z.string().describe("what stands out in these examples") };
  }

  /** A short dataset summary from the accumulated observations. */
  class SummarizeDataset extends Signature {
    static override description = "Given observations about a dataset, summarize in two or three sentences what the data is and what the task asks.";
    static override input = { observations: z.string() };
    static override output = { summary: z.string().describe("a brief description of the dataset and the task") };
  }

  /** What the program does, from its structure and one example run. */
  class DescribeProgram extends Signature {
    static override description =
      "Below is the structure of a program that solves a task with calls to language models. Describe what task it is designed to solve and how it goes about it.";
    static override input = {
      programStructure: z.string().describe("the program's modules and predictors with their input and output fields"),
      programExample: z.string().describe("an example of the program in use"),
    };
    static override output = { programDescription: z.string() };
  }

  /** One predictor's role in the program (DSPy's DescribeModule): one call per predictor. */
  class DescribeModule extends Signature {
    static override description =
      "Below is the structure of a program that solves a task with calls to language models, with a description of the program. " +
      "Describe the purpose of one of its modules in this program.";
    static override input = {
      programStructure: z.string().describe("the program's modules and predictors with their typed input and output fields"),
      programDescription: z.string().describe("what task the program solves and how (may be empty)"),
      programExample: z.string().describe("an example of the program in use"),
      module: z.string().describe("the module to describe: its path, instruction and typed fields"),
    };
    static override output = { moduleDescription: z.string().describe("the module's role in the program") };
  }

  /** One new instruction for one predictor. */
  class ProposeInstruction extends Signature {
    static override description =
      "Use the information below to learn about a task that we are trying to solve using calls to a language model, " +
      "then propose a new instruction that will prompt the model to solve the task better.";
    static override input = {
      datasetSummary: z.string().describe("a description of the dataset"),
      programStructure: z.string(),
      programDescription: z.string(),
      predictor: z.string().describe("the predictor to write the instruction for: its path, current instruction and typed fields with their descriptions and allowed values"),
      moduleDescription: z.string().describe("the predictor's role in the program (may be empty)"),
      taskDemos: z.string().describe("example inputs and outputs of this predictor (may be empty)"),
      basicInstruction: z.string().describe("the predictor's current instruction"),
      tip: z.string().describe("a suggestion for how to write the new instruction (may be empty)"),
    };
    static override output = { proposedInstruction: z.string().describe("the new instruction, ready to use as is") };
  }
  return { ObserveDataset, SummarizeDataset, DescribeProgram, DescribeModule, ProposeInstruction };
});

/** The tips a proposal draws from at random (DSPy's set). */
export const TIPS: Record<string, string> = {
  none: "",
  creative: "Don't be afraid to be creative when creating the new instruction!",
  simple: "Keep the instruction clear and concise.",
  description: "Make sure your instruction is very informative and descriptive.",
  high_stakes: "The instruction should include a high stakes scenario in which the LM must solve the task!",
  persona: 'Include a persona that is relevant to the task in the instruction (ie. "You are a ...")',
};
