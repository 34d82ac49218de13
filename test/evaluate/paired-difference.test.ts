import { describe, expect, it } from "@jest/globals";
import { mcnemarComparison } from "../../lib/evaluate/stats/mcnemar.js";
import { dropPValue, tangoInterval, tangoLowerBound, tangoStatistic } from "../../lib/evaluate/stats/paired-difference.js";
import { DEFAULT_TOLERANCE, pairedShareDecision } from "../../lib/lab/gate/gate.js";

// Exact enumeration: n pairs fall into (improved 0→1, worsened 1→0, unchanged) by a multinomial with
// probabilities (p01, p10, 1 − p01 − p10); the true difference is Δ = p01 − p10. Every probability
// below is a sum over all (b, c) cells, computed here from log-factorials, not by the code under test.

const Z95 = 1.6448536269514722; // the standard normal's 0.95 quantile

function logFactorials(n: number): Float64Array {
  const f = new Float64Array(n + 1);
  for (let i = 1; i <= n; i++) f[i] = f[i - 1]! + Math.log(i);
  return f;
}

/** P(event) where event(b, c) is given per cell, for n pairs at (p01, p10). */
function probability(n: number, p01: number, p10: number, event: (b: number, c: number) => boolean): number {
  const f = logFactorials(n);
  const rest = 1 - p01 - p10;
  let sum = 0;
  for (let b = 0; b <= n; b++) {
    if (b > 0 && p01 === 0) break;
    for (let c = 0; b + c <= n; c++) {
      if (c > 0 && p10 === 0) break;
      const r = n - b - c;
      if (r > 0 && rest <= 0) continue;
      if (!event(b, c)) continue;
      sum += Math.exp(f[n]! - f[b]! - f[c]! - f[r]! + (b > 0 ? b * Math.log(p01) : 0) + (c > 0 ? c * Math.log(p10) : 0) + (r > 0 ? r * Math.log(rest) : 0));
    }
  }
  return sum;
}

/** A per-cell table of a function of (b, c), so each cell is computed once per n. */
function table<T>(n: number, fn: (b: number, c: number) => T): T[][] {
  return Array.from({ length: n + 1 }, (_, b) => Array.from({ length: n + 1 - b }, (_, c) => fn(b, c)));
}

const RATES = [0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5];

/** Minimum and mean over the (p01, p10) grid of P(lower bound ≤ Δ). */
function coverage(n: number, bound: (b: number, c: number) => number): { min: number; mean: number; at: string } {
  const lows = table(n, bound);
  let min = 1, sum = 0, count = 0, at = "";
  for (const p01 of RATES) {
    for (const p10 of RATES) {
      if (p01 + p10 > 1) continue;
      const delta = p01 - p10;
      const covered = probability(n, p01, p10, (b, c) => lows[b]![c]! <= delta + 1e-12);
      sum += covered;
      count++;
      if (covered < min) { min = covered; at = `p01 ${p01}, p10 ${p10}`; }
    }
  }
  return { min, mean: sum / count, at };
}

describe("Tango's score statistic and interval for a paired difference of shares", () => {
  it("uses the restricted maximum-likelihood estimate: the statistic matches one built from a numeric maximization", () => {
    // Independent reference: maximize b·log(p + Δ) + c·log p + r·log(1 − 2p − Δ) over p by golden-section search.
    const reference = (b: number, c: number, n: number, delta: number) => {
      const r = n - b - c;
      const ll = (p: number) => (b > 0 ? b * Math.log(p + delta) : 0) + (c > 0 ? c * Math.log(p) : 0) + (r > 0 ? r * Math.log(1 - 2 * p - delta) : 0);
      let lo = Math.max(0, -delta) + 1e-15, hi = (1 - delta) / 2 - 1e-15;
      const g = (Math.sqrt(5) - 1) / 2;
      for (let i = 0; i < 300; i++) {
        const x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
        if (ll(x1) < ll(x2)) lo = x1;
        else hi = x2;
      }
      const p = (lo + hi) / 2;
      return (b - c - n * delta) / Math.sqrt(n * (2 * p + delta - delta * delta));
    };
    for (const [b, c, n] of [[3, 8, 40], [0, 5, 7], [12, 2, 50], [1, 1, 10], [0, 0, 20], [30, 45, 200]] as const) {
      for (const delta of [-0.3, -0.1, -0.05, 0.02, 0.15]) {
        expect(tangoStatistic(b, c, n, delta)).toBeCloseTo(reference(b, c, n, delta), 6);
      }
    }
  });

  it("with no changed pair among n, the bounds are ±z²/(n + z²) (by hand), not [0, 0]", () => {
    for (const n of [7, 40, 200]) {
      const [lo, hi] = tangoInterval(0, 0, n, 0.9);
      expect(lo).toBeCloseTo(-(Z95 * Z95) / (n + Z95 * Z95), 9);
      expect(hi).toBeCloseTo((Z95 * Z95) / (n + Z95 * Z95), 9);
    }
    // The interval that conditions on the changed pairs collapses there.
    expect(mcnemarComparison(0, 0, 7, 0.9).ci).toEqual([0, 0]);
  });

  it("its one-sided 95% lower bound covers by exact enumeration (grid of n and both rates); the conditional bound does not", () => {
    const lines: string[] = [];
    for (const n of [5, 7, 10, 20, 30, 50, 100]) {
      const tango = coverage(n, (b, c) => tangoLowerBound(b, c, n, 0.05));
      const conditional = coverage(n, (b, c) => mcnemarComparison(b, c, n, 0.9).ci[0]);
      lines.push(`n ${n}: Tango min ${tango.min.toFixed(4)} (${tango.at}) mean ${tango.mean.toFixed(4)}; conditional min ${conditional.min.toFixed(4)} mean ${conditional.mean.toFixed(4)}`);
      expect(tango.min).toBeGreaterThanOrEqual(0.9);
      expect(tango.mean).toBeGreaterThanOrEqual(0.945);
      // The weaker method fails the same check: with few changed pairs it claims certainty it does not have.
      expect(conditional.min).toBeLessThan(0.5);
      expect(conditional.mean).toBeLessThan(0.9);
    }
    process.stdout.write(`${lines.join("\n")}\n`);
  }, 120_000);
});

describe("the gate's level and its passes, by exact enumeration over paired 0/1 scores", () => {
  const AA = [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];

  it("A/A (p01 = p10): the gate fails at most 5% of runs for every n and rate, and near 5% somewhere (not 2.5%)", () => {
    const lines: string[] = [];
    for (const n of [5, 7, 10, 20, 30, 50, 100, 200]) {
      const verdicts = table(n, (b, c) => pairedShareDecision(b, c, n, DEFAULT_TOLERANCE).verdict);
      // Two weaker rules for contrast: the asymptotic one-sided McNemar z-test, and the old rule (two-sided 5%, negative).
      const asymptotic = table(n, (b, c) => b + c > 0 && (b - c) / Math.sqrt(b + c) <= -Z95);
      const halfLevel = table(n, (b, c) => dropPValue(b, c) <= 0.025);
      let gate = 0, z = 0, half = 0;
      for (const p of AA) {
        gate = Math.max(gate, probability(n, p, p, (b, c) => verdicts[b]![c] === "failed"));
        z = Math.max(z, probability(n, p, p, (b, c) => asymptotic[b]![c]!));
        half = Math.max(half, probability(n, p, p, (b, c) => halfLevel[b]![c]!));
      }
      lines.push(`n ${n}: gate ${gate.toFixed(4)}, asymptotic z ${z.toFixed(4)}, two-sided rule ${half.toFixed(4)}`);
      expect(gate).toBeLessThanOrEqual(0.05);
      if (n >= 30) {
        expect(gate).toBeGreaterThan(0.035);
        expect(half).toBeLessThan(0.03);
      }
      if (n >= 7) expect(z).toBeGreaterThan(0.05);
    }
    process.stdout.write(`A/A largest false-fail rate over p:\n${lines.join("\n")}\n`);
  }, 120_000);

  it("a true drop just beyond the tolerance is passed in at most 6% of runs; without the bound (conditional interval) far more often", () => {
    const lines: string[] = [];
    for (const n of [7, 10, 20, 50, 100]) {
      const passed = table(n, (b, c) => pairedShareDecision(b, c, n, DEFAULT_TOLERANCE).verdict === "passed");
      const conditional = table(n, (b, c) => dropPValue(b, c) > 0.05 && mcnemarComparison(b, c, n, 0.9).ci[0] >= -DEFAULT_TOLERANCE);
      let worst = 0, worstConditional = 0;
      for (const p01 of [0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4]) {
        const p10 = p01 + DEFAULT_TOLERANCE + 0.001;
        if (p01 + p10 > 1) continue;
        worst = Math.max(worst, probability(n, p01, p10, (b, c) => passed[b]![c]!));
        worstConditional = Math.max(worstConditional, probability(n, p01, p10, (b, c) => conditional[b]![c]!));
      }
      lines.push(`n ${n}: gate ${worst.toFixed(4)}, conditional ${worstConditional.toFixed(4)}`);
      expect(worst).toBeLessThanOrEqual(0.06);
      if (n <= 20) expect(worstConditional).toBeGreaterThan(0.2);
    }
    process.stdout.write(`false pass at a true drop of 0.051:\n${lines.join("\n")}\n`);
  }, 120_000);
});
