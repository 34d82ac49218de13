/**
 * The regression gate's verdict rates on paired 0/1 scores, by exact enumeration (no simulation): for
 * n test examples, each example's score changes from the baseline to the candidate 0 → 1 with
 * probability p01 and 1 → 0 with probability p10, independently; the true difference is
 * Δ = p01 − p10 and the share of examples that change is r = p01 + p10 (the discordance rate). Every
 * (improved, worsened) count is weighted by its multinomial probability and given the gate's own
 * verdict (`pairedShareDecision`, tolerance 0.05 unless BENCH_TOLERANCE says otherwise).
 *
 * Prints a Markdown table: P(failed), P(passed), P(inconclusive) for A/A (Δ = 0) and for true drops of
 * 5 and 10 points, at n = 50, 200 and 1,000 and discordance rates 0.1 and 0.2 (docs/regression-gate.md
 * quotes it). Cells with probability below e^−45 are left out (their total is below 1e−13).
 *
 * Run with `npm run build --silent && node dist/bench/gate-rates.js`.
 */
import { DEFAULT_TOLERANCE, pairedShareDecision, type GateVerdict } from "../lib/lab/gate/gate.js";

const tolerance = process.env["BENCH_TOLERANCE"] === undefined ? DEFAULT_TOLERANCE : Number(process.env["BENCH_TOLERANCE"]);

function rates(n: number, p01: number, p10: number, cache: Map<number, GateVerdict>): Record<GateVerdict, number> {
  const logF = new Float64Array(n + 1);
  for (let i = 1; i <= n; i++) logF[i] = logF[i - 1]! + Math.log(i);
  const rest = 1 - p01 - p10;
  const out: Record<GateVerdict, number> = { failed: 0, passed: 0, inconclusive: 0 };
  for (let b = 0; b <= n; b++) {
    if (b > 0 && p01 === 0) break;
    for (let c = 0; b + c <= n; c++) {
      if (c > 0 && p10 === 0) break;
      const r = n - b - c;
      const logP = logF[n]! - logF[b]! - logF[c]! - logF[r]! + (b > 0 ? b * Math.log(p01) : 0) + (c > 0 ? c * Math.log(p10) : 0) + (r > 0 ? r * Math.log(rest) : 0);
      if (logP < -45) continue;
      const key = b * (n + 1) + c;
      let verdict = cache.get(key);
      if (verdict === undefined) {
        verdict = pairedShareDecision(b, c, n, tolerance).verdict;
        cache.set(key, verdict);
      }
      out[verdict] += Math.exp(logP);
    }
  }
  return out;
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
const lines = [
  `Gate verdict rates, exact enumeration, tolerance ${tolerance}, one-sided level 0.05`,
  "",
  "| n | discordance r | true difference | failed | passed | inconclusive |",
  "|---:|---:|---:|---:|---:|---:|",
];
for (const n of [50, 200, 1000]) {
  const cache = new Map<number, GateVerdict>();
  for (const r of [0.1, 0.2]) {
    for (const drop of [0, 0.05, 0.1]) {
      const p10 = (r + drop) / 2, p01 = (r - drop) / 2;
      const v = rates(n, p01, p10, cache);
      lines.push(`| ${n.toLocaleString("en-US")} | ${r} | ${drop === 0 ? "0 (A/A)" : `−${drop}`} | ${percent(v.failed)} | ${percent(v.passed)} | ${percent(v.inconclusive)} |`);
    }
  }
}
process.stdout.write(lines.join("\n") + "\n");
