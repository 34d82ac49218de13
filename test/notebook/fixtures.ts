import type { EvaluationRow, Trial } from "../../lib/store/records.js";

/** One evaluated example with a label field `sentiment`; `predicted` null means the example failed. */
export function row(index: number, expected: string, predicted: string | null, extra: Partial<EvaluationRow> = {}): EvaluationRow {
  const ok = predicted !== null;
  return {
    index,
    exampleId: `test-${index}`,
    inputs: { sentence: `sentence ${index}` },
    expected: { sentiment: expected },
    prediction: ok ? { sentiment: predicted } : null,
    scores: { accuracy: ok && predicted === expected ? 1 : 0 },
    error: ok ? null : "LMError: provider returned 500",
    durationMs: 5,
    inputTokens: 10,
    outputTokens: 2,
    cost: 0.0001,
    ...extra,
  };
}

export function trial(index: number, kind: string, score: number | null, extra: Partial<Trial> = {}): Trial {
  return {
    index,
    kind,
    parents: [],
    choices: { self: { instruction: index, demos: 0 } },
    instructions: { self: `instruction ${index}` },
    demoIds: { self: [`train-${index}`] },
    reused: 0,
    score,
    exampleScores: null,
    budgetSpent: index + 1,
    lmCalls: 2,
    inputTokens: 100,
    outputTokens: 10,
    cost: 0.001,
    durationMs: 12,
    error: null,
    data: {},
    ...extra,
  };
}
