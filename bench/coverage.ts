/**
 * Exact coverage of the intervals the docs quote, by enumerating every outcome with its probability:
 *
 * - a share's interval (the modified Wilson interval, and Wilson's own) for n = 10 … 1,000 on a fine
 *   grid of true shares (steps of 0.0005, and of 0.01/n within 10/n of either end);
 * - a graded metric whose scores are 1 with probability q and v otherwise (n = 20), where all-1 or
 *   all-v samples have no spread;
 * - Cohen's κ of two raters with two labels, over every 2×2 table of n items (n = 30 and 100), for the
 *   interval `cohenKappa` reports and the plain large-sample one.
 *
 * - by simulation, compare()'s interval of a graded metric's difference (the sign-flip test inverted)
 *   against the population's mean difference.
 *
 * Run: `npm run build && node dist/bench/coverage.js` (a few minutes, most of it the κ tables).
 */
import { compare, type ComparableReport } from "../lib/evaluate/compare.js";
import { Random } from "../lib/random.js";
import type { EvaluationRow } from "../lib/store/records.js";
import { cohenKappa } from "../lib/judge/kappa.js";
import { meanScoreInterval } from "../lib/evaluate/stats/metric-interval.js";
import { normalQuantile } from "../lib/evaluate/stats/normal.js";
import { modifiedWilsonInterval, wilsonInterval } from "../lib/evaluate/stats/share-interval.js";

type Interval = readonly [number, number];

function logFactorials(n: number): Float64Array {
  const out = new Float64Array(n + 1);
  for (let i = 2; i <= n; i++) out[i] = out[i - 1]! + Math.log(i);
  return out;
}

function binomialPmf(n: number, p: number, lf: Float64Array): Float64Array {
  return Float64Array.from({ length: n + 1 }, (_, k) => Math.exp(lf[n]! - lf[k]! - lf[n - k]! + k * Math.log(p) + (n - k) * Math.log1p(-p)));
}

function shareCoverage(n: number, intervals: readonly Interval[]): { mean: number; min: number; at: number } {
  const lf = logFactorials(n);
  const at = (p: number) => {
    const pmf = binomialPmf(n, p, lf);
    let c = 0;
    for (let k = 0; k <= n; k++) if (intervals[k]![0] <= p && p <= intervals[k]![1]) c += pmf[k]!;
    return c;
  };
  let sum = 0, count = 0, min = 1, argmin = 0;
  for (let i = 1; i < 2000; i++) {
    const c = at(i / 2000);
    sum += c;
    count++;
    if (c < min) [min, argmin] = [c, i / 2000];
  }
  for (let t = 0.01; t <= 10; t += 0.01) {
    for (const p of [t / n, 1 - t / n]) {
      if (!(p > 0 && p < 1)) continue;
      const c = at(p);
      if (c < min) [min, argmin] = [c, p];
    }
  }
  return { mean: sum / count, min, at: argmin };
}

function shares(): void {
  console.log("Share intervals: exact coverage (mean over p = 0.0005 … 0.9995; lowest on the fine grid)");
  console.log("n\tmodified mean\tmodified lowest (at p)\tWilson mean\tWilson lowest (at p)");
  for (const n of [10, 20, 30, 50, 100, 200, 1000]) {
    const modified = shareCoverage(n, Array.from({ length: n + 1 }, (_, k) => modifiedWilsonInterval(k, n)));
    const plain = shareCoverage(n, Array.from({ length: n + 1 }, (_, k) => wilsonInterval(k, n)));
    console.log(`${n}\t${modified.mean.toFixed(3)}\t${modified.min.toFixed(3)} (${modified.at.toPrecision(3)})\t${plain.mean.toFixed(3)}\t${plain.min.toFixed(3)} (${plain.at.toPrecision(3)})`);
  }
}

function graded(): void {
  console.log("\nScores 1 with probability q, else v (n = 20): exact coverage over the number of 1s, lowest over q = 0.5 … 0.999");
  const n = 20, lf = logFactorials(n);
  for (const v of [0.5, 0.8]) {
    const intervals = Array.from({ length: n + 1 }, (_, k) => meanScoreInterval(Float64Array.from({ length: n }, (_, i) => (i < k ? 1 : v))).interval);
    let min = 1, argmin = 0;
    for (let q = 0.5; q < 0.9995; q += 0.001) {
      const mean = v + (1 - v) * q, pmf = binomialPmf(n, q, lf);
      let c = 0;
      for (let k = 0; k <= n; k++) if (intervals[k]![0] <= mean && mean <= intervals[k]![1]) c += pmf[k]!;
      if (c < min) [min, argmin] = [c, q];
    }
    console.log(`v = ${v}: lowest ${min.toFixed(3)} at q = ${argmin.toFixed(3)}`);
  }
}

/** The plain large-sample interval κ ± z·SE (Fleiss, Cohen & Everitt), clipped to [−1, 1]. */
function plainKappaInterval(matrix: number[][]): Interval {
  const k = cohenKappa(matrix);
  const z = normalQuantile(0.975);
  return [Math.max(-1, k.kappa - z * k.standardError), Math.min(1, k.kappa + z * k.standardError)];
}

function kappas(): void {
  console.log("\nCohen's κ, two labels: exact coverage over every 2×2 table of n items (a table with κ undefined counts as a miss)");
  console.log("n\tcells (yy, yn, ny, nn)\tκ\tundefined\treported interval\tplain κ ± z·SE");
  const populations = [[0.08, 0.04, 0.04, 0.84], [0.05, 0.05, 0.02, 0.88], [0.02, 0.02, 0.02, 0.94], [0.15, 0.03, 0.05, 0.77], [0.45, 0.02, 0.03, 0.5], [0.4, 0.1, 0.1, 0.4], [0.7, 0.1, 0.1, 0.1], [0.3, 0.2, 0.2, 0.3]];
  for (const n of [30, 100]) {
    const lf = logFactorials(n);
    for (const p of populations) {
      const truth = cohenKappa([[p[0]!, p[1]!], [p[2]!, p[3]!]]).kappa;
      let reported = 0, plain = 0, undefinedShare = 0;
      for (let a = 0; a <= n; a++) for (let b = 0; a + b <= n; b++) for (let c = 0; a + b + c <= n; c++) {
        const d = n - a - b - c;
        const pr = Math.exp(lf[n]! - lf[a]! - lf[b]! - lf[c]! - lf[d]! + a * Math.log(p[0]!) + b * Math.log(p[1]!) + c * Math.log(p[2]!) + d * Math.log(p[3]!));
        const m = [[a, b], [c, d]];
        const k = cohenKappa(m);
        if (Number.isNaN(k.kappa)) {
          undefinedShare += pr;
          continue;
        }
        if (k.ci[0] <= truth && truth <= k.ci[1]) reported += pr;
        const [low, high] = plainKappaInterval(m);
        if (low <= truth && truth <= high) plain += pr;
      }
      console.log(`${n}\t${p.join(", ")}\t${truth.toFixed(3)}\t${undefinedShare.toFixed(3)}\t${reported.toFixed(3)}\t${plain.toFixed(3)}`);
    }
  }
}

/** Rows scoring `scores` on the metric "quality". */
function qualityReport(scores: readonly number[]): ComparableReport {
  const results = scores.map((q, i): EvaluationRow => ({
    index: i, exampleId: `e${i}`, inputs: {}, expected: { t: "x" }, prediction: { t: "x" }, scores: { quality: q }, error: null,
    durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
  }));
  return { results, metrics: { quality: scores.reduce((x, y) => x + y, 0) / scores.length } };
}

function comparisons(): void {
  console.log("\ncompare() on a graded metric (sign-flip-inversion): simulated coverage of the population's mean difference, 300 runs each");
  console.log("Scores on a 0.05 grid: A uniform; B = A for half the examples, else A + shift + noise (triangular, ±0.4), clipped to [0, 1]");
  const random = new Random(11);
  for (const [shift, n] of [[0, 30], [0.1, 30], [0.1, 100], [0.2, 20]] as const) {
    const draw = (): [number, number] => {
      const a = Math.round(random.next() * 20) / 20;
      const b = random.next() < 0.5 ? a : Math.min(1, Math.max(0, Math.round((a + shift + (random.next() + random.next() - 1) * 0.4) * 20) / 20));
      return [a, b];
    };
    let total = 0;
    const draws = 400_000;
    for (let i = 0; i < draws; i++) {
      const [a, b] = draw();
      total += b - a;
    }
    const truth = total / draws;
    let covered = 0, significant = 0;
    const runs = 300;
    for (let r = 0; r < runs; r++) {
      const a: number[] = [], b: number[] = [];
      for (let i = 0; i < n; i++) {
        const [x, y] = draw();
        a.push(x);
        b.push(y);
      }
      const c = compare(qualityReport(a), qualityReport(b));
      if (c.ci[0] <= truth && truth <= c.ci[1]) covered++;
      if (c.significant) significant++;
    }
    console.log(`shift ${shift}, n ${n}: mean difference ${truth.toFixed(4)}, covered ${(covered / runs).toFixed(3)}, significant ${(significant / runs).toFixed(3)}`);
  }
}

shares();
graded();
comparisons();
kappas();
