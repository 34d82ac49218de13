/**
 * The signature `new ChainOfThought(signature)` predicts with (lib/predict/chain-of-thought.ts): the
 * caller's signature with a `reasoning` output placed first. Deferred (scripts/deferred-modules.mjs):
 * loaded at the first ChainOfThought built, so `import "typelm"` parses only the class's facade.
 */
import { z } from "zod";
import { ValidationError } from "../errors.js";
import { Signature, type Shape, type SignatureClass } from "../signature/signature.js";

// One derived class per caller's signature: compiled descriptors and prompt caches are keyed by class.
const derived = new WeakMap<SignatureClass, SignatureClass>();

/** The signature with a `reasoning` output placed first, so the model thinks before it answers. */
export function withReasoning(signature: SignatureClass): SignatureClass {
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
  return cls;
}
