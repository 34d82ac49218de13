import { setOwn } from "./plain-object.js";

/**
 * The JSON form of a value with object keys sorted at every level, so equal values give equal
 * text (cache keys, signature fingerprints, comparing outputs). Values with `toJSON` (Temporal
 * values, dates) enter as their JSON form; `undefined` alone gives "undefined".
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) setOwn(sorted, k, (v as Record<string, unknown>)[k]);
    return sorted;
  }) ?? "undefined";
}
