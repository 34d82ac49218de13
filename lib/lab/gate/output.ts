// The gate's verdict written out: terminal lines, JUnit XML and GitHub's Markdown step summary.
import { type Comparison, formatPValue, pValueText, signed } from "../../evaluate/compare.js";
import { printable } from "../terminal.js";
import type { GateCase, GateResult } from "./rows.js";

function xml(text: string): string {
  // XML 1.0 forbids most control characters even as references: drop them.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

function numbers(c: Comparison): string {
  const percent = Number((c.confidence * 100).toPrecision(6));
  return `baseline ${c.a.toFixed(3)}, this run ${c.b.toFixed(3)}, difference ${signed(c.diff)} ` +
    `(${percent}% CI ${signed(c.ci[0])} to ${signed(c.ci[1])}), ${formatPValue(c.pValue)}, ${c.test}, n = ${c.n}`;
}

/** The primary metric's numbers: values, difference, its one-sided bound and test, and the verdict. */
function decisionNumbers(c: GateCase, tolerance: number): string {
  const k = c.comparison, d = c.decision!;
  return `baseline ${k.a.toFixed(3)}, this run ${k.b.toFixed(3)}, difference ${signed(d.diff)} ` +
    `(one-sided 95% lower bound ${signed(d.low)}, ${d.lowMethod}), one-sided ${formatPValue(d.pValue)}, ${d.test}, ` +
    `tolerance ${tolerance}, n = ${k.n}: ${d.verdict}`;
}

function caseNumbers(c: GateCase, tolerance: number): string {
  return c.decision === null ? `${numbers(c.comparison)}: ${secondaryWords(c.comparison)}` : decisionNumbers(c, tolerance);
}

/** What a metric that does not decide the gate did, in words (never a bare "ok"). */
function secondaryWords(k: Comparison): string {
  return `not gated, ${k.significant ? (k.diff < 0 ? "significantly worse" : "significantly better") : "no significant change"}`;
}

/**
 * JUnit XML: one testsuite, one testcase per model × metric, a `<failure>` with the numbers on a
 * regression (and on an inconclusive verdict unless `--allow-underpowered`); each testcase's output
 * names its verdict.
 */
export function junitXml(result: GateResult, suite: string): string {
  const failures = result.cases.filter((c) => c.failure !== null).length;
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="typelm" tests="${result.cases.length}" failures="${failures}">`,
    `  <testsuite name="${xml(suite)}" tests="${result.cases.length}" failures="${failures}" errors="0" skipped="0">`,
  ];
  for (const c of result.cases) {
    const text = caseNumbers(c, result.tolerance);
    lines.push(`    <testcase classname="${xml(`${suite}.${c.model}`)}" name="${xml(`${c.metric}${c.primary ? " (primary)" : ""}`)}">`);
    if (c.failure !== null) lines.push(`      <failure message="${xml(c.failure)}" type="${c.decision?.verdict === "inconclusive" ? "inconclusive" : "regression"}">${xml(text)}</failure>`);
    lines.push(`      <system-out>${xml(text)}</system-out>`, `    </testcase>`);
  }
  lines.push(`  </testsuite>`, `</testsuites>`, "");
  return lines.join("\n");
}

/**
 * Text for one cell of a Markdown table: control characters shown as escapes, HTML's `& < >` as
 * entities, and the characters Markdown reads (`\ | \` * _ [ ] ~`) escaped, so a name cannot break
 * the table, open a code span or a link, or inject HTML.
 */
export function markdownCell(text: string): string {
  return printable(text)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/[\\`|*_[\]~]/g, (ch) => `\\${ch}`);
}

/** A Markdown table of the gate for a CI job's step summary: the verdict word for each case. */
export function markdownSummary(result: GateResult, suite: string): string {
  const lines = [
    `### typelm gate: ${markdownCell(suite)} ${result.verdict}${result.verdict === "inconclusive" && result.allowUnderpowered ? " (allowed by --allow-underpowered)" : ""}`,
    "",
    `Baseline: ${markdownCell(result.baseline)}; tolerance ${result.tolerance} (the largest drop a pass rules out, one-sided 5% level)`,
    "",
    "| model | metric | baseline | this run | difference | interval | p | verdict |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const c of result.cases) {
    const k = c.comparison, d = c.decision;
    const interval = d === null ? `${signed(k.ci[0])} to ${signed(k.ci[1])}` : `≥ ${signed(d.low)} (one-sided 95%)`;
    const p = d === null ? pValueText(k.pValue) : `${pValueText(d.pValue)} (one-sided)`;
    const verdict = d === null ? secondaryWords(k) : d.verdict;
    lines.push(`| ${markdownCell(c.model)} | ${markdownCell(c.metric)}${c.primary ? " (primary)" : ""} | ${k.a.toFixed(3)} | ${k.b.toFixed(3)} | ${signed(k.diff)} | ${interval} | ${p} | ${verdict} |`);
  }
  for (const w of result.warnings) lines.push("", `> ${markdownCell(w)}`);
  return lines.join("\n") + "\n\n";
}

/** The gate in terminal lines, ending with the verdict. */
export function gateLines(result: GateResult): string[] {
  return [
    `gate against ${result.baseline} (tolerance ${result.tolerance}):`,
    ...result.cases.map((c) => `  ${c.model} ${c.metric}${c.primary ? " (primary)" : ""}: ${caseNumbers(c, result.tolerance)}${c.decision?.verdict === "failed" ? ` — REGRESSION: ${(c.failure ?? "").replace(/^failed: /, "")}` : ""}`),
    ...result.warnings.map((w) => `warning: ${w}`),
    result.verdict === "inconclusive" && result.allowUnderpowered ? "gate: inconclusive (allowed by --allow-underpowered: exit 0)" : `gate: ${result.verdict}`,
  ];
}
