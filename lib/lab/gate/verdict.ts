// The gate's decision: each model's and metric's rows paired with the baseline's, one-sided tests, and
// the verdict on the primary metric.
import { ValidationError } from "../../errors.js";
import { type ComparableReport, type Comparison, compare, formatPValue, signed } from "../../evaluate/compare.js";
import { dropPValue, pairsNeeded, rulesOutDrop, tangoLowerBound } from "../../evaluate/stats/paired-difference.js";
import { printable } from "../terminal.js";
import { DEFAULT_TOLERANCE, GATE_ALPHA, type GateBaseline, type GateCase, type GateDecision, type GateResult, type GateVerdict, checkTolerance } from "./rows.js";

/**
 * The verdict for paired 0/1 scores (n pairs, `improved` went 0 → 1 and `worsened` 1 → 0): `failed`
 * when the exact one-sided McNemar test rejects "no drop" at `GATE_ALPHA`; `passed` when not failed and
 * Tango's one-sided lower bound (unconditional: it does not collapse when few pairs changed) is at or
 * above −tolerance; `inconclusive` otherwise.
 */
export function pairedShareDecision(improved: number, worsened: number, n: number, tolerance: number): GateDecision {
  const pValue = dropPValue(improved, worsened);
  const low = tangoLowerBound(improved, worsened, n, GATE_ALPHA);
  const verdict: GateVerdict = pValue <= GATE_ALPHA ? "failed" : rulesOutDrop(improved, worsened, n, tolerance, GATE_ALPHA) ? "passed" : "inconclusive";
  return {
    verdict, diff: (improved - worsened) / n, low, lowMethod: "tango-score", pValue, test: "mcnemar-exact (one-sided)",
    needed: verdict === "inconclusive" ? pairsNeeded(improved, worsened, n, tolerance, GATE_ALPHA) : null,
  };
}

/**
 * The verdict for a graded metric (or `f1_score`) from the paired comparison at the one-sided level:
 * the test's p-value halved on the side of the difference, the low end of the 90% two-sided interval.
 * All of the gate's use of `compare` for graded metrics is here.
 */
export function gradedDecision(baseline: ComparableReport, current: ComparableReport, metric: string, tolerance: number): GateDecision {
  const c = compare(baseline, current, { metric, confidence: 1 - 2 * GATE_ALPHA });
  const pValue = c.diff < 0 ? c.pValue / 2 : 1 - c.pValue / 2;
  // No example changed: the resampled interval collapses to [0, 0]. A per-example difference in [−1, 1]
  // that was never seen is bounded as a 0/1 one is (no changed pair among n), not by 0.
  const low = c.better.length + c.worse.length === 0 ? Math.min(c.ci[0], tangoLowerBound(0, 0, c.n, GATE_ALPHA)) : c.ci[0];
  const verdict: GateVerdict = c.diff < 0 && pValue < GATE_ALPHA ? "failed" : low >= -tolerance ? "passed" : "inconclusive";
  // The interval narrows as 1/√n: the n at which its low end would reach −tolerance at this difference.
  const needed = verdict !== "inconclusive" || !(c.diff + tolerance > 0) || !(c.diff - low > 0)
    ? null : c.better.length + c.worse.length === 0 ? pairsNeeded(0, 0, c.n, tolerance, GATE_ALPHA) : Math.ceil(c.n * ((c.diff - low) / (c.diff + tolerance)) ** 2);
  return { verdict, diff: c.diff, low, lowMethod: `${c.ciMethod} (90% two-sided)`, pValue, test: `${c.test} (one-sided)`, needed };
}

/**
 * Pairs each model's test evaluation with the baseline's on every metric and decides the primary
 * metric's verdict. Example ids must match (a `ValidationError` names the first that does not); a
 * model the baseline lacks is an error.
 */
export function runGate(
  baseline: GateBaseline,
  current: readonly { model: string; report: ComparableReport }[],
  metrics: readonly string[],
  options: { tolerance?: number | undefined; allowUnderpowered?: boolean | undefined } = {},
): GateResult {
  const tolerance = checkTolerance(options.tolerance ?? DEFAULT_TOLERANCE);
  const allowUnderpowered = options.allowUnderpowered === true;
  const cases: GateCase[] = [];
  const warnings: string[] = [];
  for (const { model, report } of current) {
    const base = baseline.models.get(model) ?? baseline.models.get("*");
    if (base === undefined) {
      throw new ValidationError(
        `--baseline: ${baseline.source} has no model "${printable(model)}" (it has ${[...baseline.models.keys()].map((m) => `"${printable(m)}"`).join(", ")}); run the gate with the same --lm as the baseline`,
        { field: "baseline" },
      );
    }
    metrics.forEach((metric, i) => {
      if (typeof base.metrics[metric] !== "number") {
        throw new ValidationError(`--baseline: ${baseline.source} has no metric "${printable(metric)}" for model "${printable(model)}"`, { field: "baseline" });
      }
      let comparison: Comparison;
      try {
        comparison = compare(base, report, { metric });
      } catch (error) {
        if (error instanceof ValidationError) {
          throw new ValidationError(`--baseline: model "${printable(model)}": ${error.message.replace(/^compare: /, "")} (the baseline is the first report, this run the second)`, { field: "baseline" });
        }
        throw error;
      }
      const primary = i === 0;
      let decision: GateDecision | null = null;
      let failure: string | null = null;
      if (primary) {
        decision = comparison.test === "mcnemar-exact"
          ? pairedShareDecision(comparison.better.length, comparison.worse.length, comparison.n, tolerance)
          : gradedDecision(base, report, metric, tolerance);
        if (decision.verdict === "failed") {
          failure = `failed: ${metric} fell significantly: ${signed(decision.diff)}, one-sided ${formatPValue(decision.pValue)}`;
        } else if (decision.verdict === "inconclusive") {
          const warning = inconclusiveSentence(model, metric, decision, tolerance, comparison.n);
          warnings.push(warning);
          if (!allowUnderpowered) failure = warning;
        }
      }
      cases.push({ model, metric, primary, comparison, decision, failure });
    });
  }
  const verdicts = cases.flatMap((c) => (c.decision === null ? [] : [c.decision.verdict]));
  const verdict: GateVerdict = verdicts.includes("failed") ? "failed" : verdicts.includes("inconclusive") ? "inconclusive" : "passed";
  return {
    baseline: baseline.source, tolerance, allowUnderpowered, cases, verdict, warnings,
    failed: verdict === "failed" || (verdict === "inconclusive" && !allowUnderpowered),
  };
}

function inconclusiveSentence(model: string, metric: string, d: GateDecision, tolerance: number, n: number): string {
  const more = d.needed === null
    ? "no number of examples would settle it at this difference"
    : `about ${roughly(d.needed)} examples (this run has ${n}) would make it conclusive if the scores change at the same rate`;
  return `inconclusive: ${model} ${metric}: the data cannot rule out a drop larger than ${tolerance} ` +
    `(difference ${signed(d.diff)}, one-sided 95% lower bound ${signed(d.low)}); ${more}`;
}

/** A count rounded to two significant figures (an estimate, not a promise). */
function roughly(n: number): string {
  if (n < 100) return String(n);
  const step = 10 ** (Math.floor(Math.log10(n)) - 1);
  return (Math.ceil(n / step) * step).toLocaleString("en-US");
}
