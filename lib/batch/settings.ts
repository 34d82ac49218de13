// The `batch` option's settings, as evaluations, optimizers and `program.batch` check them when they are
// given (synchronously). The transport that sends a round's requests through a provider's batch service
// (transport.ts) loads only with the runs that use it, not at `import "typelm"`.
import { ValidationError } from "../errors.js";

/** `batch: true | { pollInterval, maxRequestsPerBatch, maxRetries, maxWait }` as the options take it. */
export type BatchOption = boolean | { pollInterval?: number; maxRequestsPerBatch?: number; maxRetries?: number; maxWait?: number };

export interface BatchSettings {
  pollInterval: number | undefined;
  maxRequestsPerBatch: number | undefined;
  maxRetries: number;
  /** Seconds to wait for one batch before giving up on it (default 24 hours, the providers' window). */
  maxWait: number;
}

/** The providers' own completion window: a batch not done by then will not be. */
const DEFAULT_MAX_WAIT_S = 24 * 60 * 60;

/** The `batch` option checked: null when off. `optionName` is how the caller's options spell it (`program.batch`: "providerBatch"). */
export function batchSettings(owner: string, option: BatchOption | undefined, optionName = "batch"): BatchSettings | null {
  if (option === undefined || option === false) return null;
  if (option === true) return { pollInterval: undefined, maxRequestsPerBatch: undefined, maxRetries: 2, maxWait: DEFAULT_MAX_WAIT_S };
  if (option === null || typeof option !== "object" || Array.isArray(option)) {
    throw new ValidationError(`${owner} option ${optionName} must be true, false or { pollInterval, maxRequestsPerBatch, maxRetries, maxWait }; received ${JSON.stringify(option)}`, { field: optionName });
  }
  const positive = (name: string, value: unknown, integer: boolean): number | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      throw new ValidationError(`${owner} option ${optionName}.${name} must be a positive ${integer ? "whole number" : "number"}; received ${JSON.stringify(value)}`, { field: `${optionName}.${name}` });
    }
    return value;
  };
  const retries = option.maxRetries;
  if (retries !== undefined && (!Number.isInteger(retries) || retries < 0)) {
    throw new ValidationError(`${owner} option ${optionName}.maxRetries must be a whole number ≥ 0; received ${JSON.stringify(retries)}`, { field: `${optionName}.maxRetries` });
  }
  return {
    pollInterval: positive("pollInterval", option.pollInterval, false),
    maxRequestsPerBatch: positive("maxRequestsPerBatch", option.maxRequestsPerBatch, true),
    maxRetries: retries ?? 2,
    maxWait: positive("maxWait", option.maxWait, false) ?? DEFAULT_MAX_WAIT_S,
  };
}
