/** Holm's adjustment of the p-values of a family of comparisons. */
import { ValidationError } from "../../errors.js";

/**
 * Holm's step-down adjustment of a family of p-values: sorted ascending, the i-th smallest (from 1) is
 * multiplied by (m − i + 1), made monotone (never below the one before) and capped at 1. Returned in
 * the order given. Ties keep their order.
 */
export function holm(pValues: readonly number[]): number[] {
  if (!Array.isArray(pValues)) throw new ValidationError(`holm: expected an array of p-values; received ${typeof pValues}`, { field: "pValues" });
  pValues.forEach((p, i) => {
    if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
      throw new ValidationError(`holm: pValues[${i}] must be a number between 0 and 1; received ${JSON.stringify(p)}`, { field: `pValues[${i}]` });
    }
  });
  const m = pValues.length;
  const order = pValues.map((_, i) => i).sort((x, y) => pValues[x]! - pValues[y]! || x - y);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach((i, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * pValues[i]!));
    adjusted[i] = running;
  });
  return adjusted;
}
