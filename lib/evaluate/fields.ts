import type { z } from "zod";
import { resolve } from "../signature/kind.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Shape } from "../signature/signature.js";
import type { EvaluationRow } from "../store/records.js";
import { canonicalJson } from "../canonical-json.js";
import { ValidationError } from "../errors.js";

/** How an expected output field is compared by `f1_score`, `confusion` and `perLabel`. */
export interface FieldInfo {
  name: string;
  /** A classification label (enum, boolean, literal or label string) rather than free text. */
  label: boolean;
  /** The declared label values (enum/literal/boolean) in declaration order, when known. */
  labels: string[] | undefined;
}

/** A label string is one short word; more distinct values than this and it is free text. */
const MAX_LABEL_STRINGS = 32;
const MAX_LABEL_LENGTH = 40;

/**
 * Classifies each expected output field. The module's declared output schema decides when a
 * predictor declares the field (the last one that does, since later predictors produce the final
 * answer): enums, booleans and literals are labels, and so are string fields whose expected values
 * are all single words (no whitespace, at most 40 characters) with at most 32 distinct values.
 * Anything else is free text.
 */
export function describeFields(moduleInstance: Module, examples: readonly FewShotExample[]): FieldInfo[] {
  const declared = declaredOutputs(moduleInstance);
  const names = [...new Set(examples.flatMap((e) => Object.keys(e.output)))];
  return names.map((name) => {
    const schema = declared.get(name);
    const kind = schema === undefined ? undefined : resolve(schema).kind;
    if (kind?.kind === "enum") return { name, label: true, labels: kind.values.map(String) };
    if (kind?.kind === "literal") return { name, label: true, labels: kind.values.map(String) };
    if (kind?.kind === "boolean") return { name, label: true, labels: ["true", "false"] };
    const values = examples.map((e) => e.output[name]);
    const allStrings = values.every((v) => typeof v === "string");
    const wordLike = allStrings && values.every((v) => (v as string).length <= MAX_LABEL_LENGTH && !/\s/.test(v as string));
    const stringish = kind === undefined || kind.kind === "string";
    const label = stringish && wordLike && new Set(values).size <= MAX_LABEL_STRINGS;
    return { name, label, labels: undefined };
  });
}

/**
 * Field kinds from the rows alone (for a report that lost its module, e.g. a lab store run or a report
 * read back from JSON): as `describeFields` decides for a field no predictor declares, a field is a
 * label when every expected value is a string of one word (at most 40 characters) and there are at
 * most 32 distinct values.
 */
export function inferFields(rows: readonly EvaluationRow[]): FieldInfo[] {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.expected ?? {})))];
  return names.map((name) => {
    const values = rows.map((r) => r.expected?.[name]);
    const label = values.every((v) => typeof v === "string" && v.length <= MAX_LABEL_LENGTH && !/\s/.test(v)) && new Set(values).size <= MAX_LABEL_STRINGS;
    return { name, label, labels: undefined };
  });
}

/** An output value as a label: strings as they are, other values in JSON form, missing as null. */
export function labelOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : canonicalJson(value);
}

/** An output value as text for token comparisons. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : canonicalJson(value);
}

/**
 * When the module is a single predictor (Predict, ChainOfThought ...), its output fields are all it
 * can return, so an expected field outside them (a typo, another task's data) could only ever score
 * 0 on a built-in metric: a `ValidationError` before any model call. A composed module's `forward`
 * may return fields of its own making, so it is not checked.
 */
export function checkExpectedFields(moduleInstance: Module, examples: readonly FewShotExample[]): void {
  const predictors = moduleInstance.namedPredictors();
  if (predictors.length !== 1 || predictors[0]![1] !== moduleInstance) return;
  const signature = (moduleInstance as { signature?: { name?: string; output?: Shape } }).signature;
  if (signature?.output === undefined) return;
  const produced = Object.keys(signature.output);
  examples.forEach((example, i) => {
    const field = Object.keys(example.output).find((f) => !produced.includes(f));
    if (field === undefined) return;
    const id = example.id === undefined ? "" : ` (id "${example.id}")`;
    throw new ValidationError(
      `testExamples[${i}]${id} expects output field "${field}", which ${moduleInstance.constructor.name} (signature ${signature.name ?? "?"}) never produces; ` +
        `its output fields: ${produced.join(", ")}. Rename the expected field or evaluate the module that produces it`,
      { field: `testExamples[${i}].output.${field}` },
    );
  });
}

function declaredOutputs(moduleInstance: Module): Map<string, z.ZodType> {
  const found = new Map<string, z.ZodType>();
  for (const [, predictor] of moduleInstance.namedPredictors()) {
    const output = (predictor as { signature?: { output?: Shape } }).signature?.output;
    if (output !== undefined) for (const [name, schema] of Object.entries(output)) found.set(name, schema);
  }
  return found;
}
