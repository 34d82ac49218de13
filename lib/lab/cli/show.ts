import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { promptCacheLine, type PromptCacheUsage } from "../../evaluate/prompt-cache.js";
import { join, relative } from "node:path";
import { ValidationError } from "../../errors.js";
import { adjustComparisons, compare, pValueText, signed, type Comparison } from "../../evaluate/compare.js";
import type { EvaluationReport } from "../../evaluate/report.js";
import { metricsOf, runTitle, storedReport } from "../../evaluate/stored-run.js";
import type { EvaluationRow, EvaluationRun, LabRun, OptimizationRun } from "../../store/records.js";
import { printable } from "../terminal.js";
import { mediaLines } from "./show-media.js";

/** `typelm show <run>`: an evaluation's model, metrics with intervals and failed rows, or an optimization's trials. */
export function showRun(run: LabRun): string {
  const lines = [
    `${run.kind} run ${printable(run.id)}: ${printable(runTitle(run.name, run.kind, run.config))}`,
    `status ${run.status}, started ${run.startedAt}${run.endedAt === null ? "" : `, ended ${run.endedAt}`}` + (run.score === null ? "" : `, score ${run.score.toFixed(3)}`),
  ];
  if (run.error !== null) lines.push(`error: ${printable(run.error)}`);
  if (run.kind !== "optimization") lines.push(...showEvaluation(run));
  else lines.push(...showOptimization(run));
  return lines.join("\n") + "\n";
}

function showEvaluation(run: EvaluationRun): string[] {
  const metrics = metricsOf(run);
  const failed = run.rows.filter((r) => r.error !== null);
  const models = run.config["models"];
  const out = [
    `model: ${Array.isArray(models) && models.length > 0 ? models.map((m) => printable(String(m))).join(", ") : "not recorded"}`,
    `${run.rows.length} examples, ${failed.length} failed`,
  ];
  const source = run.config["rescoredFrom"];
  if (typeof source === "string") out.splice(1, 0, `rescored from ${printable(source)} (its stored predictions; no program call)`);
  const judge = run.summary["judge"] as { calls?: unknown; inputTokens?: unknown; outputTokens?: unknown; cost?: unknown } | undefined;
  if (typeof judge?.calls === "number" && judge.calls > 0) {
    out.push(`judge calls ${judge.calls}, tokens ${String(judge.inputTokens)} in / ${String(judge.outputTokens)} out, cost $${Number(judge.cost).toFixed(4)}`);
  }
  const promptCache = run.summary["promptCache"] as PromptCacheUsage | undefined;
  const input = run.summary["inputTokens"];
  if (promptCache !== undefined && typeof promptCache.readTokens === "number" && typeof input === "number") out.push(promptCacheLine(promptCache, input));
  const warnings = run.summary["warnings"];
  if (Array.isArray(warnings)) for (const w of warnings) out.push(`warning: ${printable(String(w))}`);
  if (Object.keys(metrics).length > 0) {
    const report = storedReport(run, metrics);
    out.push("", ...table(["metric", "value", "95% CI", "method"], Object.entries(metrics).map(([m, v]) => {
      const ci = report.ci[m];
      return [printable(m), v.toFixed(3), ci === undefined ? "-" : `${ci[0].toFixed(3)} to ${ci[1].toFixed(3)}`, intervalMethod(report, m)];
    })));
  }
  out.push(...mediaLines(run.rows));
  if (failed.length > 0) {
    out.push("", "failed rows:");
    out.push(...table(["#", "example", "error"], failed.map((r) => [String(r.index), printable(r.exampleId ?? "-"), printable(clip(r.error ?? "", 160))])));
  }
  return out;
}

/** How the report computed a metric's interval: named by the report itself where it says (`ciMethod`). */
function intervalMethod(report: EvaluationReport, metric: string): string {
  const named = (report as { ciMethod?: Record<string, string> }).ciMethod?.[metric];
  return typeof named === "string" ? printable(named) : "percentile bootstrap";
}

function showOptimization(run: OptimizationRun): string[] {
  const onTraining = (run.summary as { validation?: unknown }).validation === "training";
  const scoredOn = onTraining ? "training examples (chosen on them)" : "validation (chosen on it)";
  const best = run.bestTrial === null ? undefined : run.trials.find((t) => t.index === run.bestTrial);
  const out = [
    `${run.trials.length} trials${run.bestTrial === null ? "" : `, returned trial ${run.bestTrial}`}` +
      (best?.score === null || best?.score === undefined ? "" : `, score ${best.score.toFixed(3)}, ${scoredOn}`),
  ];
  const warnings = (run.summary as { warnings?: unknown }).warnings;
  if (Array.isArray(warnings)) for (const w of warnings) out.push(`warning: ${printable(typeof w === "string" ? w : String((w as { message?: unknown })?.message ?? JSON.stringify(w)))}`);
  out.push(`Scores are on the ${onTraining ? "training" : "validation"} examples; * marks the returned trial, chosen on them, so its score is optimistic.`, "");
  out.push(...table(
    ["trial", "kind", onTraining ? "training score" : "validation score", "reused", "choices", "error"],
    run.trials.map((t) => [
      `${t.index}${t.index === run.bestTrial ? "*" : ""}`, printable(t.kind), t.score === null ? "-" : t.score.toFixed(3), String(t.reused ?? 0),
      printable(clip(Object.keys(t.choices).length === 0 ? "-" : JSON.stringify(t.choices), 60)), printable(clip(t.error ?? "", 80)),
    ]),
  ));
  return out;
}

/** `typelm compare <runA> <runB>`: each shared metric paired by example, then the examples that changed. */
export function compareRuns(a: LabRun, b: LabRun): string {
  for (const run of [a, b]) {
    if (run.kind !== "evaluation") {
      throw new ValidationError(`run ${printable(run.id)} is an ${run.kind} run; compare takes two evaluation runs (see "typelm runs --kind evaluation")`, { field: "run" });
    }
  }
  const ra = { results: (a as EvaluationRun).rows, metrics: metricsOf(a as EvaluationRun) };
  const rb = { results: (b as EvaluationRun).rows, metrics: metricsOf(b as EvaluationRun) };
  const shared = Object.keys(ra.metrics).filter((m) => m in rb.metrics);
  if (shared.length === 0) {
    throw new ValidationError(`the two runs share no metric (A: ${Object.keys(ra.metrics).join(", ") || "none"}; B: ${Object.keys(rb.metrics).join(", ") || "none"})`, { field: "metric" });
  }
  // Holm over the metrics compared here; the first metric is the primary one.
  const comparisons: Comparison[] = adjustComparisons(shared.map((metric) => compare(ra, rb, { metric })));
  const percent = Number((comparisons[0]!.confidence * 100).toPrecision(6));
  const out = [
    `A: ${printable(a.id)} ${printable(a.name)}`,
    `B: ${printable(b.id)} ${printable(b.name)}`,
    `${comparisons[0]!.n} examples paired by id`,
    "",
    ...table(
      ["metric", "A", "B", "difference", `${percent}% CI`, "interval", "p-value", "p (Holm)", "test", "verdict", "mde (80% power)"],
      comparisons.map((c, i) => [
        `${printable(c.metric)}${i === 0 && comparisons.length > 1 ? " (primary)" : ""}`, c.a.toFixed(3), c.b.toFixed(3), signed(c.diff), `${signed(c.ci[0])} to ${signed(c.ci[1])}`,
        c.ciMethod, pValueText(c.pValue), pValueText(c.pAdjusted), c.test, c.significant ? "significant" : "not significant",
        c.significant ? "" : c.mde === null ? "none" : c.mde.toFixed(3),
      ]),
    ),
  ];
  if (comparisons.some((c) => !c.significant)) {
    out.push("", "mde: the smallest true difference this many examples detect with 80% power at the 5% level (none: too few examples changed for any).");
  }
  const first = comparisons[0]!;
  const rowsA = byId((a as EvaluationRun).rows);
  const rowsB = byId((b as EvaluationRun).rows);
  const changed = [...first.better.map((id) => ["better", id] as const), ...first.worse.map((id) => ["worse", id] as const)];
  out.push("", changed.length === 0
    ? `No example changed on ${printable(first.metric)}.`
    : `Examples that changed on ${printable(first.metric)}: ${first.better.length} better, ${first.worse.length} worse`);
  for (const [how, id] of changed) {
    const ra1 = rowsA.get(id);
    const rb1 = rowsB.get(id);
    out.push(
      "",
      `${how === "better" ? "+" : "-"} ${printable(id)} (${scoreOf(ra1, first.metric)} -> ${scoreOf(rb1, first.metric)})`,
      `    input:    ${printable(clip(JSON.stringify(ra1?.inputs ?? {}), 200))}`,
      `    expected: ${printable(clip(JSON.stringify(ra1?.expected ?? {}), 200))}`,
      `    A:        ${printable(clip(predictionText(ra1), 200))}`,
      `    B:        ${printable(clip(predictionText(rb1), 200))}`,
    );
  }
  return out.join("\n") + "\n";
}

function byId(rows: readonly EvaluationRow[]): Map<string, EvaluationRow> {
  return new Map(rows.map((r) => [r.exampleId ?? `#${r.index}`, r]));
}

function scoreOf(row: EvaluationRow | undefined, metric: string): string {
  const v = row?.scores[metric];
  return v === undefined ? "-" : v.toFixed(2);
}

function predictionText(row: EvaluationRow | undefined): string {
  if (row === undefined) return "-";
  if (row.error !== null) return `failed: ${row.error}`;
  return JSON.stringify(row.prediction ?? null);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Columns padded to their widest cell. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * `typelm init <name>`: `experiments/<name>.ts` and `data/<name>/data.csv` (20 example tickets) in
 * `cwd`, a starting point that runs offline with the stand-in model. Refuses to overwrite either.
 */
export function initExperiment(cwd: string, name: string): string[] {
  if (!NAME.test(name)) {
    throw new ValidationError(`"${printable(name)}" is not a usable name: 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit`, { field: "name" });
  }
  const file = join(cwd, "experiments", `${name}.ts`);
  const data = join(cwd, "data", name);
  for (const path of [file, data]) {
    if (existsSync(path)) throw new ValidationError(`${path} already exists; init never overwrites: choose another name or remove it`, { field: "name" });
  }
  mkdirSync(join(cwd, "experiments"), { recursive: true });
  mkdirSync(data, { recursive: true });
  writeFileSync(file, experimentTemplate(name));
  writeFileSync(join(data, "data.csv"), TICKETS);
  return [file, join(data, "data.csv")].map((p) => relative(cwd, p));
}

function experimentTemplate(name: string): string {
  return `// An experiment: \`npx typelm run experiments/${name}.ts\` evaluates the program on the test split of
// data/${name}/, optimizes it on train/dev, evaluates it again and writes reports/${name}/report.md.
// Replace the signature and data/${name}/data.csv with your task (one column per field, plus an optional id).
import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";

const Triage = Signature.define({
  name: "Triage",
  description: "Route a customer's support ticket to the team that handles it.",
  input: { ticket: z.string().describe("The customer's message") },
  output: { team: z.enum(["billing", "technical", "account"]).describe("The team that handles it") },
});

export default defineExperiment({
  name: ${JSON.stringify(name)},
  dataset: "../data/${name}",       // relative to this file; data.csv is split 60/20/20 by id
  signature: Triage,
  program: ({ signature }) => new Predict(signature),
  metrics: ["accuracy", "f1_score"], // the first is the headline and what the optimizer maximizes
  labelField: "team",                // adds a confusion matrix to the report
  optimizer: "mipro",                // "mipro" | "gepa" | "simple" | "none"
  optimizerOptions: { mode: "light", kDemos: 2 },
});
`;
}

const TICKETS = `id,ticket,team
t01,I was charged twice for my subscription this month.,billing
t02,"The app crashes when I open the settings page, every time.",technical
t03,How do I change the email address on my account?,account
t04,Can I get a refund for the annual plan I bought yesterday?,billing
t05,"Export to CSV gives an empty file, even with data in the table.",technical
t06,I forgot my password and the reset link never arrives.,account
t07,Please send me an invoice with our company's VAT number.,billing
t08,The page loads forever after the latest update.,technical
t09,I want to close my account and delete my data.,account
t10,Why did my card get declined when I tried to upgrade?,billing
t11,"Sync between my phone and laptop stopped working, ""last synced 3 days ago"".",technical
t12,How can I add a second user to my account?,account
t13,My discount code was not applied to the last payment.,billing
t14,I get error 500 when uploading a picture.,technical
t15,Please change the name on my account to my married name.,account
t16,Do you offer monthly billing instead of yearly?,billing
t17,Notifications do not show up on Android 15.,technical
t18,Two-factor authentication locked me out of my account.,account
t19,I was billed after I cancelled my trial.,billing
t20,The search returns no results for words with accents.,technical
`;

