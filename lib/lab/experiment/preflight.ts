// The check before a run: one call of the program on the first test example, so a model that cannot
// be reached, or does not answer in time, stops the run with a clear error before anything is paid for.
import { ConfigurationError, LMError, ValidationError } from "../../errors.js";
import type { Module } from "../../module.js";
import { FewShotExample } from "../../prompt/few-shot.js";
import type { ModelChoice } from "./model-choice.js";
import { waitingFor } from "./pending.js";

/**
 * One call before the run, so a model that cannot be reached stops it with a clear error instead of a
 * run of failed rows; one that does not answer within `timeoutMs` stops it too.
 */
export async function preflight(program: Module, example: FewShotExample | undefined, model: ModelChoice, timeoutMs: number): Promise<void> {
  if (example === undefined) throw new ValidationError("The test split is empty: nothing to evaluate (is --limit 0?)", { field: "limit" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<"time up">((settle) => { timer = setTimeout(settle, timeoutMs, "time up"); });
  const outcome = await waitingFor(`the model ${model.id} to answer the check before the run`, () => Promise.race([
    program.call(example.input).then(() => ({ error: undefined }), (error: unknown) => ({ error })),
    timeUp,
  ])).finally(() => clearTimeout(timer));
  if (outcome === "time up") {
    throw new ConfigurationError(
      `The model ${model.id} (from ${model.source}) did not answer the check before the run within ${formatSeconds(timeoutMs)}: ` +
        `the program's call on the first test example${example.id === undefined ? "" : ` (id "${example.id}")`} had not finished. ` +
        "Check that the server is running and answers (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST) and that the program waits for nothing else, " +
        "or choose another model with --lm provider/model.",
    );
  }
  const { error } = outcome;
  if (error !== undefined) {
    if (!(error instanceof LMError || error instanceof ConfigurationError)) return; // it answered; a bad reply is scored later
    throw new ConfigurationError(
      `The model ${model.id} (from ${model.source}) could not be used: ${error.message.replace(/\.+$/, "")}. ` +
        "Check that the server is running and reachable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST) and that its key is set, " +
        "or choose another model with --lm provider/model (or leave --lm and TYPELM_LM unset for the offline stand-in).",
      { cause: error },
    );
  }
}

export function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
