import { TypelmError, ValidationError } from "../errors.js";

/** Seconds one example (its module call plus its metric) may take, when `exampleTimeout` is not given. */
export const DEFAULT_EXAMPLE_TIMEOUT = 600;

/** The longest delay `setTimeout` keeps (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** An example that went past `exampleTimeout`; its row (or per-example score) keeps this as the error. */
export class ExampleTimeoutError extends TypelmError {}

/**
 * The `exampleTimeout` option in seconds: the default when undefined, else a finite number > 0, or a
 * `ValidationError` naming the option and the class it was given to.
 */
export function checkExampleTimeout(owner: string, value: unknown): number {
  if (value === undefined) return DEFAULT_EXAMPLE_TIMEOUT;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    const received = typeof value === "number" || value === null ? String(value) : `${typeof value} ${JSON.stringify(value)}`;
    throw new ValidationError(
      `${owner} option exampleTimeout must be a positive number of seconds (default ${DEFAULT_EXAMPLE_TIMEOUT}); received ${received}`,
      { field: "exampleTimeout" },
    );
  }
  return value;
}

/** The error of an example past its limit: it timed out, after how long, and what was still running. */
export function exampleTimeoutError(seconds: number, doing: string): ExampleTimeoutError {
  return new ExampleTimeoutError(`example timed out after ${seconds} s (exampleTimeout) while ${doing}; raise exampleTimeout if it needs longer`);
}

/** `setTimeout`'s delay for a limit in seconds (capped where `setTimeout` would fire at once instead). */
export function timerDelay(seconds: number): number {
  return Math.min(seconds * 1000, MAX_TIMER_MS);
}

/**
 * Runs `work` and waits for it at most `seconds`: past that, rejects with an `ExampleTimeoutError`
 * saying it timed out, naming the limit and `doing()` (what was still running). The work itself
 * cannot be stopped (a module call takes no abort signal), so it is abandoned: whatever it settles
 * to later is ignored, a late rejection included (it never becomes an unhandled rejection). The
 * timer is cleared as soon as either side settles, so a finished run leaves nothing keeping Node alive.
 * `work` gets `timedOut()`, true once the limit has passed: it checks it before a step with effects
 * of its own (calling the user's metric) so abandoned work does not go on to take it.
 */
export function withExampleTimeout<T>(seconds: number, doing: () => string, work: (timedOut: () => boolean) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let passed = false;
    const timer = setTimeout(() => {
      passed = true;
      reject(exampleTimeoutError(seconds, doing()));
    }, timerDelay(seconds));
    // Both handlers are attached, so a late rejection is handled (and ignored: the promise is settled).
    work(() => passed).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
