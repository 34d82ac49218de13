/**
 * Sets `key` on an object being built as an own, enumerable property. Plain assignment of
 * "__proto__" would instead replace the object's prototype (dropping the key, and letting a model
 * reply or an input choose the prototype), so that one key is defined rather than assigned.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
