// Runs added to the viewer's fixture lab for the pages' finer points: an evaluation with nested,
// listed and long values, a wrong row, a failed row and a structured model reply; a rescore of it by a
// judge (rationales, the judge's usage in the summary, `config.rescoredFrom`); and an optimization
// whose 20 trials use 3 distinct instructions.
import type { LabStore } from "../../lib/store/lab-store.js";
import type { EvaluationRow, Trial } from "../../lib/store/records.js";
import { call, HOSTILE } from "./fixture.js";

/** The ids of the added runs. */
export interface JudgedRuns {
  source: string;
  rescored: string;
  repeats: string;
}

/** A long passage (over 400 characters) whose end, past the fold, holds hostile text. */
export const LONG = `${"The quick brown fox jumps over the lazy dog. ".repeat(12)}END ${HOSTILE[0]}`;

/** A word only row 1's judge rationale holds. */
export const RATIONALE_WORD = "Zebrafinch";

/** The judge's usage the rescored run's summary records. */
export const JUDGE_USAGE = { calls: 4, inputTokens: 812, outputTokens: 96, cost: 0.0042 };

/** The structured reply of the source run's example 0. */
export const REPLY = { answer: "4", reasoning: { steps: ["add 2 and 2", "check"] } };

function base(index: number, over: Partial<EvaluationRow>): EvaluationRow {
  return {
    index, exampleId: `q-${index}`, inputs: { question: `question ${index}` }, expected: { answer: "4" }, prediction: { answer: "4" },
    scores: { accuracy: 1 }, error: null, durationMs: 10, inputTokens: 50, outputTokens: 5, cost: 0.0001, ...over,
  };
}

/** The source run's rows: 0 right (nested inputs), 1 wrong, 2 failed, 3 right with a long text. */
export function sourceRows(): EvaluationRow[] {
  return [
    base(0, { inputs: { question: "What is 2+2?", context: { source: "arithmetic", tags: ["math", "easy"] } } }),
    base(1, { prediction: { answer: "5" }, scores: { accuracy: 0 } }),
    base(2, { prediction: null, scores: { accuracy: 0 }, error: "ProviderError: the request timed out" }),
    base(3, { inputs: { question: "Summarize", passage: LONG } }),
  ];
}

/** Adds the runs to `lab` (the fixture's extension hook) and keeps their ids in `into`. */
export function addJudgedRuns(into: Partial<JudgedRuns>): (lab: LabStore) => void {
  return (lab) => {
    const config = { module: "QA", metrics: ["accuracy"], models: ["openai/gpt-4o-mini"], examples: 4 };
    const source = lab.startRun({ kind: "evaluation", name: "fields", config });
    for (const r of sourceRows()) lab.recordExample(source, r, r.index === 0 ? [call(0, JSON.stringify(REPLY))] : undefined);
    lab.finishRun(source, { status: "completed", score: 0.5, summary: { metrics: { accuracy: 0.5 }, inputTokens: 200, outputTokens: 20, cost: 0.0004 } });

    const rescored = lab.startRun({ kind: "evaluation", name: "fields", config: { ...config, metrics: ["judge"], rescoredFrom: source } });
    for (const r of sourceRows()) {
      const pass = r.error === null && r.index !== 1;
      lab.recordExample(rescored, {
        ...r, inputTokens: 0, outputTokens: 0, cost: 0, scores: { judge: pass ? 1 : 0 },
        details: r.error === null ? { judge: { verdict: pass ? "pass" : "fail", rationale: r.index === 1 ? `${RATIONALE_WORD} rule: 2+2 is not 5.` : "The answer is right." } } : undefined,
      });
    }
    lab.finishRun(rescored, { status: "completed", score: 0.5, summary: { metrics: { judge: 0.5 }, inputTokens: 0, outputTokens: 0, cost: 0, judge: JUDGE_USAGE } });

    // 20 trials over 3 instructions (two predictors): trial i uses instruction i % 3 with its own demos.
    const repeats = lab.startRun({ kind: "optimization", name: "MIPROv2", config: {} });
    for (let i = 0; i < 20; i++) {
      const k = i % 3;
      const trial: Trial = {
        index: i, kind: i === 0 ? "baseline" : "minibatch", parents: [], choices: { answer: { instruction: k, demos: i } },
        instructions: { answer: `Answer the question (instruction ${k}).`, check: k === 2 ? "Check twice." : "Check once." },
        demoIds: { answer: [`d-${i}`], check: [] }, score: 0.4 + i / 100, exampleScores: null, budgetSpent: i, lmCalls: 2,
        inputTokens: 10, outputTokens: 1, cost: 0, durationMs: 5, error: null, data: {}, reused: 0,
      };
      lab.recordTrial(repeats, trial);
    }
    lab.finishRun(repeats, { status: "completed", score: 0.59, bestTrial: 19, summary: {} });
    Object.assign(into, { source, rescored, repeats });
  };
}
