import { z } from "zod";
import { ValidationError } from "../errors.js";
import { Signature, type Shape, type SignatureClass } from "../signature/signature.js";
import { Predict, type PredictOptions } from "./predict.js";

export type WithReasoning<O extends Shape> = { reasoning: z.ZodString } & O;

const derived = new WeakMap<SignatureClass, SignatureClass>();

/** The signature with a `reasoning` output placed first, so the model thinks before it answers. */
function withReasoning<I extends Shape, O extends Shape>(signature: SignatureClass<I, O>): SignatureClass<I, WithReasoning<O>> {
  if (Object.prototype.hasOwnProperty.call(signature.output ?? {}, "reasoning")) {
    throw new ValidationError(
      `${signature.name} declares its own "reasoning" output; ChainOfThought adds that field itself, so remove it or use Predict`,
      { field: "reasoning" },
    );
  }
  let cls = derived.get(signature);
  if (cls === undefined) {
    cls = Signature.define({
      name: signature.name || "Signature",
      description: signature.description ?? "",
      input: (signature.input ?? {}) as Shape,
      output: { reasoning: z.string().describe("Step by step reasoning process"), ...signature.output },
    });
    derived.set(signature, cls);
  }
  return cls as SignatureClass<I, WithReasoning<O>>;
}

/** Predict with a `reasoning` output the model fills in before its answer. */
export class ChainOfThought<I extends Shape = Shape, O extends Shape = Shape> extends Predict<I, WithReasoning<O>> {
  /** The signature as the caller declared it (without `reasoning`). */
  readonly baseSignature: SignatureClass<I, O>;

  constructor(signature: SignatureClass<I, O>, options: PredictOptions = {}) {
    super(withReasoning(signature), options);
    this.baseSignature = signature;
  }
}
