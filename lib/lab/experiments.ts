import type { MetricSpec } from "../evaluate/scoring.js";
import type { Module } from "../module.js";
import { ChainOfThought } from "../predict/chain-of-thought.js";
import { Predict } from "../predict/predict.js";
import type { SignatureClass } from "../signature/signature.js";
import { ValidationError } from "../errors.js";

/** One named reproduction: a bundled dataset, the program run on it, and how it is measured. */
export interface Experiment {
  name: string;
  dataset: string;
  /** What the experiment shows, for the report. */
  summary: string;
  program(signature: SignatureClass): Module;
  /** The first is the headline. */
  metrics: MetricSpec[];
  /** The output field whose confusion matrix the report shows (classification only). */
  labelField?: string;
  /** MIPROv2 settings (the seed comes from --seed). */
  mipro: { mode: "light" | "balanced" | "heavy"; kDemos: number };
}

const classify = (signature: SignatureClass): Module => new Predict(signature);

export const EXPERIMENTS: readonly Experiment[] = [
  {
    name: "poem-sentiment", dataset: "poem-sentiment", labelField: "label", metrics: ["accuracy", "f1_score"],
    summary: "Sentiment of a verse (4 labels): a Predict program before and after MIPROv2 chose its instruction and demos.",
    program: classify, mipro: { mode: "light", kDemos: 4 },
  },
  {
    name: "banking77", dataset: "banking77", labelField: "intent", metrics: ["accuracy", "f1_score"],
    summary: "Intent of a bank customer's message (10 of BANKING77's intents): Predict before and after MIPROv2.",
    program: classify, mipro: { mode: "light", kDemos: 4 },
  },
  {
    name: "gsm8k", dataset: "gsm8k", metrics: ["accuracy"],
    summary: "Grade-school math word problems, final number only: ChainOfThought before and after MIPROv2.",
    program: (signature) => new ChainOfThought(signature), mipro: { mode: "light", kDemos: 3 },
  },
  {
    name: "restaurant8k", dataset: "restaurant8k", metrics: ["accuracy"],
    summary: "Booking details (people, date, time, names) copied from a message: Predict before and after MIPROv2; accuracy = every slot right.",
    program: classify, mipro: { mode: "light", kDemos: 4 },
  },
];

export function experimentNamed(name: string): Experiment {
  const found = EXPERIMENTS.find((e) => e.name === name);
  if (found === undefined) {
    throw new ValidationError(
      `Unknown experiment "${name}": the known ones are ${EXPERIMENTS.map((e) => e.name).join(", ")}`,
      { field: "experiment" },
    );
  }
  return found;
}
