// What an evaluation checks of its judges before the run: each one's model resolved (none is an
// error), the offline stand-in refused, and (`checkJudgesAnswer`) one call each, as the program's check.
// Loaded at first use: by an evaluation with a judge among its metrics (see the hook in judge.ts).
import { resolveLM } from "../config.js";
import { ConfigurationError, LMError } from "../errors.js";
import type { LanguageModel } from "../lm/types.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { ModelMetricChecks } from "../evaluate/model-metrics.js";
import { Judge } from "./judge.js";

/** The judges among an evaluation's metrics. */
export function judgesIn(metrics: readonly unknown[] | undefined): Judge[] {
  return (metrics ?? []).filter((m): m is Judge => m instanceof Judge);
}

/** Whether `lm` is the offline stand-in (`simulated/stand-in`), which copies demos and reads nothing it is asked. */
export function isOfflineStandIn(lm: LanguageModel): boolean {
  return lm.provider === "simulated" && lm.model === "stand-in";
}

/**
 * The model a judge calls: its predictor's own, else the judge's `lm`, else the one configured where
 * the evaluation runs (`withLM`, `configure`). A judge with none is a `ConfigurationError`, and so is
 * one whose model is the offline stand-in: it cannot judge (it would pass or fail every row unread).
 */
export function judgeModel(judge: Judge): LanguageModel {
  let lm = judge.predictor.config.lm ?? judge.config.lm;
  if (lm === undefined) {
    try {
      lm = resolveLM(undefined, undefined);
    } catch (error) {
      throw new ConfigurationError(
        `Judge "${judge.name}" has no model: give it one (new Judge({ ..., lm: new LM("openai/gpt-4o-mini") })) or configure one for the run ` +
          "(configure((c) => { c.lm = ... }) or withLM; typelm run: --lm or TYPELM_LM)",
        { cause: error },
      );
    }
  }
  if (isOfflineStandIn(lm)) {
    throw new ConfigurationError(
      `Judge "${judge.name}" would be judged by the offline stand-in (${lm.id}), which is not a language model and cannot judge: ` +
        "it copies the outputs of a demo and never reads the answer, so every row would get the same verdict. " +
        "Give the judge a model of its own (new Judge({ ..., lm: new LM(\"provider/model\") })), or run with a language model " +
        "(--lm provider/model, TYPELM_LM, or a local Ollama).",
    );
  }
  return lm;
}

/** Resolves every judge's model before the run (see `judgeModel`); throws before any call. */
export function checkJudgeModels(metrics: readonly unknown[] | undefined): void {
  for (const judge of judgesIn(metrics)) judgeModel(judge);
}

/**
 * One call of each judge before the run, as the program's model is checked: the judge judges
 * `prediction` for `example`. A model that cannot be used (a missing provider package, a refused
 * key, a server that does not answer) is a `ConfigurationError` naming the judge and its model; one
 * that does not answer within `timeoutMs` too. A reply the judge cannot read is left to the run
 * (that row is an error row). `checked` skips a judge already checked with the same model.
 */
export async function checkJudgesAnswer(
  metrics: readonly unknown[] | undefined, example: FewShotExample, prediction: Record<string, unknown>, timeoutMs: number,
  checked: Set<unknown> = new Set(),
): Promise<void> {
  for (const judge of judgesIn(metrics)) {
    const lm = judgeModel(judge);
    // One check per judge and model (a judge of its own model is checked once whatever the program's model).
    const key = `${judge.name}\u0000${lm.id}`;
    if (checked.has(key)) continue;
    checked.add(key);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeUp = new Promise<"time up">((settle) => { timer = setTimeout(settle, timeoutMs, "time up"); });
    const outcome = await Promise.race([
      judge.judge(example, prediction).then(() => ({ error: undefined }), (error: unknown) => ({ error })),
      timeUp,
    ]).finally(() => clearTimeout(timer));
    if (outcome === "time up") {
      throw new ConfigurationError(
        `Judge "${judge.name}": its model ${lm.id} did not answer the check before the run within ${timeoutMs / 1000} s. ` +
          "Check that its server is running and answers (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST), or give the judge another model.",
      );
    }
    const { error } = outcome;
    if (error instanceof LMError || error instanceof ConfigurationError) {
      throw new ConfigurationError(
        `Judge "${judge.name}": its model ${lm.id} could not be used: ${error.message.replace(/\.+$/, "")}. ` +
          "Check that its provider's package is installed, its key is set and its server is reachable, or give the judge another model.",
        { cause: error },
      );
    }
  }
}

export { JUDGE_ONE_VERDICT } from "../evaluate/model-metrics.js";

/** These checks as an evaluation runs them (lib/evaluate/model-metrics.ts), loaded by the judge room's hook at first use. */
export const judgeChecks: ModelMetricChecks = { checkModels: checkJudgeModels, checkAnswers: checkJudgesAnswer, oneVerdictWarnings };

/**
 * The warnings for judges that gave every row they judged (two or more, error rows left out) the
 * same verdict (or score): a judge that cannot tell answers apart, e.g. one whose model ignores its
 * prompt, looks like that. One sentence per such judge.
 */
export function oneVerdictWarnings(
  metrics: readonly unknown[] | undefined,
  rows: readonly { error: string | null; scores: Record<string, number>; details?: Record<string, Record<string, unknown>> }[],
): string[] {
  const out: string[] = [];
  for (const judge of judgesIn(metrics)) {
    const judged = rows.filter((r) => r.error === null && r.details?.[judge.name] !== undefined);
    if (judged.length < 2) continue;
    const verdictOf = (r: (typeof judged)[number]): string => {
      const given = r.details![judge.name]![judge.verdictField];
      return given === undefined ? `score ${r.scores[judge.name]}` : judge.verdictField === "score" ? `score ${String(given)}` : String(given);
    };
    const first = verdictOf(judged[0]!);
    if (judged.some((r) => verdictOf(r) !== first)) continue;
    out.push(
      `Judge "${judge.name}" gave every one of the ${judged.length} rows it judged the same verdict (${first}): a judge that cannot tell ` +
        "answers apart looks like that. Check its model and criteria, e.g. calibrate it against human labels (calibrate(judge, examples)).",
    );
  }
  return out;
}
