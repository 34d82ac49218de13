// Which model each predictor of a program calls, as a run would resolve it. Used by an evaluation (the
// models it records) and by the optimizers' cost estimates, so it lives here, below optimize/.
import type { LanguageModel } from "../lm/types.js";
import { Module } from "../module.js";

/** The model each predictor of `program` calls: its own, else the innermost enclosing module's, else the configured one. */
export function predictorLMs(program: Module, fallback?: LanguageModel): Map<object, LanguageModel | undefined> {
  const lms = new Map<object, LanguageModel | undefined>();
  const seen = new Set<unknown>();
  const visit = (value: unknown, inherited: LanguageModel | undefined): void => {
    if (value === null || typeof value !== "object" || seen.has(value)) return;
    seen.add(value);
    if (value instanceof Module) {
      const own = value.config.lm ?? inherited;
      if ((value as { isPredictor?: unknown }).isPredictor === true) {
        lms.set(value, own ?? fallback);
        return;
      }
      for (const [key, child] of Object.entries(value)) if (key !== "config") visit(child, own);
      return;
    }
    if (Array.isArray(value)) value.forEach((child) => visit(child, inherited));
    else if (value instanceof Map) for (const child of value.values()) visit(child, inherited);
  };
  visit(program, undefined);
  return lms;
}
