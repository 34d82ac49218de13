/**
 * ChainOfThought: Predict with a `reasoning` output the model fills in before its answer. This module
 * is the class's face; the signature with `reasoning` is derived by chain-of-thought-setup.ts, loaded
 * at the first ChainOfThought built.
 */
import type { z } from "zod";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { withReasoning } from "./chain-of-thought-setup.js";
import { Predict, type PredictOptions } from "./predict.js";

export type WithReasoning<O extends Shape> = { reasoning: z.ZodString } & O;

/** Predict with a `reasoning` output the model fills in before its answer. */
export class ChainOfThought<I extends Shape = Shape, O extends Shape = Shape> extends Predict<I, WithReasoning<O>> {
  /** The signature as the caller declared it (without `reasoning`). */
  readonly baseSignature: SignatureClass<I, O>;

  constructor(signature: SignatureClass<I, O>, options: PredictOptions = {}) {
    super(withReasoning(signature) as SignatureClass<I, WithReasoning<O>>, options);
    this.baseSignature = signature;
  }
}
