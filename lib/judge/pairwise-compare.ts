// The work of `PairwiseJudge.compare` (lib/judge/pairwise.ts): both orders per example, the counts, the
// interval and the sign test. Loaded at its first call so `import "typelm"` does not load it.
import { ValidationError } from "../errors.js";
import type { JudgeUsage } from "../evaluate/report.js";
import { mcnemarExact } from "../evaluate/stats/mcnemar.js";
import type { Interval } from "../evaluate/stats/methods.js";
import { meanScoreInterval } from "../evaluate/stats/metric-interval.js";
import { describeError } from "../instrument/bus.js";
import { emptyUsage, trackUsage } from "../lm/usage-scope.js";
import { withTrace } from "../predict/trace.js";
import type { EvaluationRow } from "../store/records.js";
import type { PairwiseComparison, PairwiseInput, PairwiseJudge, PairwiseOutput, PairwiseReport, PairwiseRow } from "./pairwise.js";

/** `PairwiseJudge.compare`, loaded at its first call (lib/judge/pairwise.ts). */
export async function comparePairs(judge: PairwiseJudge, reportA: PairwiseReport, reportB: PairwiseReport, options: { concurrency?: number } = {}): Promise<PairwiseComparison> {
  const a = rowsOf(reportA, "reportA"), b = rowsOf(reportB, "reportB");
  if (a.length !== b.length) {
    throw new ValidationError(`PairwiseJudge.compare: reportA has ${a.length} rows and reportB ${b.length}; compare two evaluations of the same examples`, { field: "reportB" });
  }
  a.forEach((row, i) => {
    if (row.exampleId !== b[i]!.exampleId) {
      throw new ValidationError(
        `PairwiseJudge.compare: row ${i} is example ${JSON.stringify(row.exampleId)} in reportA and ${JSON.stringify(b[i]!.exampleId)} in reportB; compare two evaluations of the same examples in the same order`,
        { field: "reportB" },
      );
    }
  });
  const concurrency = options.concurrency ?? 8;
  const usage = emptyUsage();
  const rows: PairwiseRow[] = new Array(a.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < a.length) {
      const i = next++;
      rows[i] = await trackUsage(usage, () => judgePair(judge, a[i]!, b[i]!));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, a.length) }, worker));
  return summarize(rows, { calls: usage.calls, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cost: usage.cost });
}

async function judgePair(judge: PairwiseJudge, rowA: EvaluationRow, rowB: EvaluationRow): Promise<PairwiseRow> {
  const base = { index: rowA.index, exampleId: rowA.exampleId, aFirst: null, bFirst: null, inconsistent: false, error: null };
  if (rowA.prediction === null || rowB.prediction === null) {
    if (rowA.prediction === null && rowB.prediction === null) return { ...base, outcome: "tie", note: "both failed" };
    return { ...base, outcome: rowA.prediction === null ? "B" : "A", note: rowA.prediction === null ? "A failed" : "B failed" };
  }
  const ask = (first: Record<string, unknown>, second: Record<string, unknown>) => {
    const input: PairwiseInput = { inputs: rowA.inputs, first, second };
    if (judge.reference) input.expected = rowA.expected;
    return withTrace(() => judge.call(input), []).then((r) => r.result);
  };
  let aFirst: PairwiseOutput, bFirst: PairwiseOutput;
  try {
    [aFirst, bFirst] = await Promise.all([ask(rowA.prediction, rowB.prediction), ask(rowB.prediction, rowA.prediction)]);
  } catch (error) {
    return { ...base, outcome: null, note: null, error: describeError(error) };
  }
  const one = aFirst.winner === "first" ? "A" : aFirst.winner === "second" ? "B" : "tie";
  const two = bFirst.winner === "first" ? "B" : bFirst.winner === "second" ? "A" : "tie";
  const inconsistent = one !== two;
  return { ...base, aFirst, bFirst, inconsistent, outcome: inconsistent ? "tie" : one, note: null };
}

function summarize(rows: PairwiseRow[], judge: JudgeUsage): PairwiseComparison {
  let winsA = 0, winsB = 0, ties = 0, inconsistent = 0, failures = 0;
  const outcomes: number[] = [];
  for (const row of rows) {
    if (row.outcome === null) {
      failures++;
      continue;
    }
    if (row.inconsistent) inconsistent++;
    if (row.outcome === "A") winsA++;
    else if (row.outcome === "B") winsB++;
    else ties++;
    outcomes.push(row.outcome === "B" ? 1 : row.outcome === "A" ? 0 : 0.5);
  }
  const n = outcomes.length;
  const winRate = n === 0 ? 0.5 : (winsB + ties / 2) / n;
  // A share of wins when there is no tie, the BCa bootstrap otherwise (the share bound when every outcome is the same).
  const { interval, method } = n === 0 ? { interval: [0, 1] as Interval, method: "bootstrap-bca" as const } : meanScoreInterval(outcomes);
  const ciMethod = method === "wilson" ? "wilson" : "bootstrap-bca";
  return { n, winsA, winsB, ties, inconsistent, winRate, ci: interval, ciMethod, pValue: mcnemarExact(winsA, winsB), failures, rows, judge };
}

function rowsOf(report: PairwiseReport, which: string): readonly EvaluationRow[] {
  if (report === null || typeof report !== "object" || !Array.isArray(report.results)) {
    throw new ValidationError(`PairwiseJudge.compare: ${which} must be an evaluation report (an object with results); received ${typeof report}`, { field: which });
  }
  return report.results;
}
