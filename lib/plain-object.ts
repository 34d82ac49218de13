// Plain objects as data: recognising them, and building them without letting a key such as
// "__proto__" (from a model reply or an input) act on the object instead of being stored in it.

/**
 * Whether a value is an object of named fields (what JSON calls an object): not null, not an array.
 * The one check used wherever replies, inputs, tool arguments and schemas are walked.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Sets `key` on an object being built as an own, enumerable property. Plain assignment of
 * "__proto__" would instead replace the object's prototype (dropping the key, and letting a model
 * reply or an input choose the prototype), so that one key is defined rather than assigned.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
