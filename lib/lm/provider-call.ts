// One provider call of an LM under the retry and timeout policy, streamed when the caller gave
// `onDelta`: the caller's signal joins each attempt's own (timeout) signal, the first text chunk of
// each attempt is timed for `lm.request.end`, an attempt that already handed out text is never
// retried, and what the caller's `onDelta` threw (or the caller's abort) comes back as it is.
import { currentPolicy } from "./policy.js";
import type { CallSettings, Provider, ProviderReply } from "./providers/index.js";
import { withRetry, type RetryTarget } from "./retry.js";
import { abortError } from "./stream-text.js";
import type { ChatOptions, LMRequest } from "./types.js";

/** Sends `request` through `client` under the current retry policy; streams through `options.onDelta` when given. */
export function callProvider(
  client: Provider, request: LMRequest, settings: Omit<CallSettings, "timeoutMs">, target: RetryTarget, options: ChatOptions,
): Promise<ProviderReply> {
  const { signal: callerSignal, onDelta } = options;
  let attemptStarted = 0;
  let firstTokenMs: number | undefined;
  let delivered = false;
  let consumer: { error: unknown } | undefined;
  const deliver = onDelta === undefined ? undefined : (text: string): void => {
    if (firstTokenMs === undefined) firstTokenMs = performance.now() - attemptStarted;
    delivered = true;
    try {
      onDelta(text);
    } catch (error) {
      consumer = { error };
      throw error;
    }
  };
  return withRetry(target, currentPolicy(), (signal, timeoutMs) => {
    attemptStarted = performance.now();
    firstTokenMs = undefined;
    const joined = callerSignal === undefined ? signal : AbortSignal.any([signal, callerSignal]);
    return client.complete(request, { ...settings, timeoutMs }, joined, deliver);
  }, {
    delivered: () => delivered,
    firstTokenMs: () => firstTokenMs,
    ownError: () => consumer ?? (callerSignal?.aborted ? { error: abortError(callerSignal) } : undefined),
    signal: callerSignal,
  });
}
