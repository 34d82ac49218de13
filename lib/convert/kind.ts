// The converters read schemas through the signature layer's one analysis of kinds and its one
// renderer of type descriptions, so an error message names a type the way the prompt did.
export { kindOf, resolve, type Kind } from "../signature/kind.js";
export { describeType } from "../signature/type-text.js";

/** Appends a key to a path: `a.b`, `items[2]`, `map["odd key"]`. */
export function joinPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}
