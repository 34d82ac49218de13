// How rooms below the Module class (the registry in store/) recognise a module without importing
// the class: every Module carries this brand on its prototype. Keeps store/ from depending on
// module.ts at run time, so module.ts may load rooms that use the store (batch/) without a cycle.

/** The brand every `Module` instance carries (on `Module.prototype`). */
export const MODULE_BRAND: unique symbol = Symbol.for("typelm.module");

/** Whether `value` is a Module instance (Predict, ChainOfThought, a user's Module subclass ...). */
export function isModule(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MODULE_BRAND] === true;
}

/** Whether `value` is a subclass of Module (not Module itself). */
export function isModuleSubclass(value: unknown): boolean {
  if (typeof value !== "function") return false;
  const prototype = (value as { prototype?: unknown }).prototype;
  return isModule(prototype) && !Object.prototype.hasOwnProperty.call(prototype, MODULE_BRAND);
}
