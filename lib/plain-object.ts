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

/**
 * A deep copy of plain objects (prototype `Object.prototype` or `null`) and arrays, each frozen, so
 * the copy cannot change after it is made. Other objects (Temporal values, `Date`s, class
 * instances) are kept by reference: they are values in their own right, and freezing a `Date`
 * would not stop its setters anyway. A structure that contains itself is copied with the same shape.
 */
export function frozenCopy<T>(value: T, copies: Map<object, unknown> = new Map()): T {
  if (typeof value !== "object" || value === null) return value;
  const done = copies.get(value);
  if (done !== undefined) return done as T;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    copies.set(value, out);
    for (const item of value) out.push(frozenCopy(item, copies));
    return Object.freeze(out) as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = Object.create(proto);
  copies.set(value, out);
  for (const [key, item] of Object.entries(value)) setOwn(out, key, frozenCopy(item, copies));
  return Object.freeze(out) as T;
}
