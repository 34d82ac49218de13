/**
 * Signatures the agents derive from the caller's signature for their inner predictors, and the
 * mapping of agent-level demos onto those predictors.
 */
import { ValidationError } from "../errors.js";
import { Signature, type Shape, type SignatureClass } from "../signature/signature.js";
import { compiled } from "../signature/compile.js";
import { FewShotExample } from "../prompt/few-shot.js";

export interface DerivedSpec {
  /** Appended to the base signature's name, e.g. "ReActStep". */
  suffix: string;
  description: string;
  /** Inputs added after the task's own inputs. */
  extraInputs?: Shape;
  /** The derived signature's outputs. */
  output: Shape;
  /** The agent's name, for errors. */
  agent: string;
}

// One derived class per (base, suffix): compiled descriptors and prompt caches are keyed by class.
const derived = new WeakMap<SignatureClass, Map<string, SignatureClass>>();

/** The task's inputs plus `extraInputs`, with `output`; rejects a task input that collides with an added one. */
export function deriveSignature(base: SignatureClass, spec: DerivedSpec): SignatureClass {
  let bySuffix = derived.get(base);
  if (bySuffix === undefined) derived.set(base, (bySuffix = new Map()));
  const hit = bySuffix.get(spec.suffix);
  if (hit !== undefined) return hit;
  const sig = compiled(base);
  const extra = spec.extraInputs ?? {};
  for (const name of Object.keys(extra)) {
    if (name in sig.inputShape) {
      throw new ValidationError(
        `${spec.agent}: ${sig.name} declares an input "${name}", but ${spec.agent} adds an input of that name for its own use; rename the field`,
        { field: name },
      );
    }
  }
  const cls = Signature.define({
    name: `${sig.name}${spec.suffix}`,
    description: spec.description,
    input: { ...sig.inputShape, ...extra },
    output: spec.output,
  });
  bySuffix.set(spec.suffix, cls);
  return cls;
}

/** Rejects a task output whose name the agent uses for its own result field (e.g. `history`). */
export function rejectOutputs(agent: string, base: SignatureClass, names: readonly string[]): void {
  const sig = compiled(base);
  for (const name of names) {
    if (name in sig.outputShape) {
      throw new ValidationError(
        `${agent}: ${sig.name} declares an output "${name}", but ${agent} puts its own "${name}" on the result; rename the field`,
        { field: name },
      );
    }
  }
}

/** True when every output key of the demo is an output of `shape`: the demo was written for that predictor. */
export function demoFits(demo: FewShotExample, shape: Shape): boolean {
  const keys = Object.keys(demo.output ?? {});
  return keys.length > 0 && keys.every((k) => k in shape);
}

/** The instruction of a task description plus how the agent works, for a derived predictor's default. */
export function taskInstruction(description: string, how: string): string {
  return description.trim() === "" ? how : `${description.trim()}\n\n${how}`;
}

/** Makes a FewShotExample with the same input and a different output. */
export function withOutput(demo: FewShotExample, output: Record<string, unknown>): FewShotExample {
  return new FewShotExample({ input: demo.input, output });
}
