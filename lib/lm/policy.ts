import { ConfigurationError } from "../errors.js";

/** The one retry/timeout policy shared by every `LM` (all values in seconds, like the public API). */
export interface LMPolicy {
  /** Time allowed for each attempt, in seconds. */
  httpTimeout: number;
  /** Retries after the first attempt (so `maxRetries: 3` means at most 4 requests). */
  maxRetries: number;
  /** Base delay of the exponential backoff, in seconds. */
  retryDelay: number;
}

function defaults(): LMPolicy {
  return { httpTimeout: 60, maxRetries: 3, retryDelay: 1 };
}

const policy: LMPolicy = defaults();

/** The current policy (read at the start of each call, so a change applies to the next call). */
export function currentPolicy(): Readonly<LMPolicy> {
  return policy;
}

/** Applies `fn` to a copy of the policy and keeps it only when every value is valid. */
export function configurePolicy(fn: (config: LMPolicy) => void): void {
  const draft = { ...policy };
  fn(draft);
  check("httpTimeout", draft.httpTimeout, (v) => v > 0);
  check("maxRetries", draft.maxRetries, (v) => v >= 0 && Number.isInteger(v));
  check("retryDelay", draft.retryDelay, (v) => v >= 0);
  Object.assign(policy, draft);
}

export function resetPolicy(): void {
  Object.assign(policy, defaults());
}

function check(name: keyof LMPolicy, value: unknown, ok: (v: number) => boolean): void {
  if (typeof value === "number" && Number.isFinite(value) && ok(value)) return;
  const expected = name === "maxRetries" ? "a non-negative integer" : name === "httpTimeout" ? "a positive number of seconds" : "a non-negative number of seconds";
  throw new ConfigurationError(`LM.configure: ${name} must be ${expected}; received ${JSON.stringify(value)}`);
}
