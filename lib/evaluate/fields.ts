import type { z } from "zod";
import { resolve } from "../signature/kind.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Shape } from "../signature/signature.js";
import { canonicalJson } from "../canonical-json.js";

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

function declaredOutputs(moduleInstance: Module): Map<string, z.ZodType> {
  const found = new Map<string, z.ZodType>();
  for (const [, predictor] of moduleInstance.namedPredictors()) {
    const output = (predictor as { signature?: { output?: Shape } }).signature?.output;
    if (output !== undefined) for (const [name, schema] of Object.entries(output)) found.set(name, schema);
  }
  return found;
}
