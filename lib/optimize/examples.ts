import { ValidationError } from "../errors.js";
import { FewShotExample } from "../prompt/few-shot.js";
import type { Module, Tunable } from "../module.js";

/** An example with the id trials record it under. */
export type IdentifiedExample = { example: FewShotExample; id: string };

/** An example's id as recorded in trials: its own id, else `<list>[<index>]`. */
export function exampleId(example: FewShotExample, list: string, index: number): string {
  return example.id ?? `${list}[${index}]`;
}

/**
 * Checks an example list before any model is called: a non-empty array of `FewShotExample`, each
 * holding every expected output field that the others hold (a missing field would score as wrong
 * for a reason the optimizer cannot see), ids unique within the list. Returns them with the ids trials record them under.
 */
export function checkExamples(examples: unknown, option: string, optimizer: string): IdentifiedExample[] {
  if (!Array.isArray(examples) || examples.length === 0) {
    throw new ValidationError(
      `${optimizer}.compile: ${option} must be a non-empty array of FewShotExample; received ${Array.isArray(examples) ? "an empty array" : typeof examples}`,
      { field: option },
    );
  }
  const fields = new Set<string>();
  examples.forEach((ex, i) => {
    if (!(ex instanceof FewShotExample)) {
      throw new ValidationError(
        `${optimizer}.compile: ${option}[${i}] must be a FewShotExample ({ input, output, id }); received ${ex === null ? "null" : typeof ex}`,
        { field: `${option}[${i}]` },
      );
    }
    for (const k of Object.keys(ex.output)) fields.add(k);
  });
  if (fields.size === 0) {
    throw new ValidationError(`${optimizer}.compile: the ${option} have no expected output values (every example's output is empty)`, { field: option });
  }
  (examples as FewShotExample[]).forEach((ex, i) => {
    for (const f of fields) {
      if (ex.output[f] === undefined) {
        throw new ValidationError(
          `${optimizer}.compile: ${option}[${i}]${ex.id ? ` (id "${ex.id}")` : ""} has no expected value for output field "${f}", ` +
            `which other examples have: give every example the same expected fields`,
          { field: `${option}[${i}].output.${f}` },
        );
      }
    }
  });
  const identified = (examples as FewShotExample[]).map((example, i) => ({ example, id: exampleId(example, option, i) }));
  // Demo sets, per-example scores and resumed trials name examples by id: two under one id would be mixed up.
  const firstAt = new Map<string, number>();
  identified.forEach(({ id }, i) => {
    const first = firstAt.get(id);
    if (first !== undefined) {
      throw new ValidationError(
        `${optimizer}.compile: ${option}[${i}] has id ${JSON.stringify(id)}, as does ${option}[${first}]: give each example its own id (or none, to be named by position)`,
        { field: `${option}[${i}].id` },
      );
    }
    firstAt.set(id, i);
  });
  return identified;
}

/** Whether an example can serve as a demo of this predictor directly (its fields are the predictor's). */
export function labelledFits(predictor: Tunable & Module, example: FewShotExample): boolean {
  const sig = (predictor as { compiledSignature?: { inputs: { name: string; required: boolean }[]; outputs: { name: string }[] } }).compiledSignature;
  if (sig === undefined) return false;
  return sig.inputs.every((f) => !f.required || f.name in example.input) && sig.outputs.some((f) => f.name in example.output);
}
