import { ValidationError } from "../errors.js";

/** What a helper was given, for its error message. */
function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value);
  if (typeof value === "object") return "an object";
  return `a ${typeof value} (${String(value)})`;
}

/**
 * Checks that a helper got an object (an unset variable or `lab.run` of an unknown id gives
 * undefined or null), so the user reads what the helper expects instead of a TypeError from inside it.
 */
export function expectObject(value: unknown, helper: string, expected: string, where = ""): asserts value is object {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ValidationError(`${helper} expects ${expected}; received ${describe(value)}${where}`, { field: helper });
  }
}

/** Checks that a helper got an array. */
export function expectArray(value: unknown, helper: string, expected: string): asserts value is readonly unknown[] {
  if (!Array.isArray(value)) throw new ValidationError(`${helper} expects ${expected}; received ${describe(value)}`, { field: helper });
}
