/**
 * Whether a value is an object of named fields (what JSON calls an object): not null, not an array.
 * The one check used wherever replies, inputs, tool arguments and schemas are walked.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
