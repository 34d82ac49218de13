// The sampling options every call accepts (`temperature`, `rolloutId`), checked. Apart from
// module.ts so the rooms that run calls (batch/) read them without importing the Module class.
import type { Sampling } from "./config.js";
import { ValidationError } from "./errors.js";
import type { CallOptions } from "./module.js";

/** The sampling options of `options`, checked (`ValidationError` naming the option). */
export function callSampling(options: CallOptions): Sampling {
  const { temperature, rolloutId } = options;
  if (temperature !== undefined && (typeof temperature !== "number" || !Number.isFinite(temperature) || temperature < 0)) {
    throw new ValidationError(`temperature must be a finite number >= 0; received ${describeValue(temperature)}`, { field: "temperature" });
  }
  if (rolloutId !== undefined && typeof rolloutId !== "string" && !(typeof rolloutId === "number" && Number.isFinite(rolloutId))) {
    throw new ValidationError(`rolloutId must be a string or a finite number; received ${describeValue(rolloutId)}`, { field: "rolloutId" });
  }
  return { temperature, rolloutId };
}

function describeValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return typeof value;
}
