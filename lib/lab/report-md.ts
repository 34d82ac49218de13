import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeComparison } from "../evaluate/compare.js";
import type { EvaluationReport } from "../evaluate/report.js";
import type { OptimizationRun } from "../store/records.js";
import type { Experiment } from "./experiments.js";
import { markdownCell, markdownCode, markdownQuote } from "./markdown.js";
import type { ModelChoice } from "./model-choice.js";
import type { EvaluationResult, ReproduceResults } from "./reproduce.js";

export interface Charts {
  /** File names written beside report.md, with their captions. */
  files: { file: string; caption: string }[];
  problems: string[];
}

/** Draws the before/after metrics and the optimizer's candidates as PNGs (typelm/notebook's charts). */
export async function drawCharts(
  dir: string, baseline: EvaluationReport, optimized: EvaluationReport, run: OptimizationRun | undefined,
): Promise<Charts> {
  const charts: Charts = { files: [], problems: [] };
  const draw = async (file: string, caption: string, bundle: () => Promise<{ "image/png"?: string }>): Promise<void> => {
    try {
      const png = (await bundle())["image/png"];
      if (png === undefined) throw new Error("the chart bundle has no image/png");
      writeFileSync(join(dir, file), Buffer.from(png, "base64"));
      charts.files.push({ file, caption });
    } catch (error) {
      charts.problems.push(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  await draw("metrics.png", "Test metrics before and after optimization", async () => {
    const { metricsBundle } = await import("../notebook/metrics.js");
    return metricsBundle([baseline, optimized], { labels: ["baseline", "optimized"] });
  });
  if (run !== undefined) {
    await draw("candidates.png", "MIPROv2 trials: score per trial, minibatch and full validation, best so far", async () => {
      const { candidatesBundle } = await import("../notebook/candidates.js");
      return candidatesBundle(run);
    });
  }
  return charts;
}

export interface ReportInput {
  results: ReproduceResults;
  experiment: Experiment;
  model: ModelChoice;
  charts: Charts;
  providerCalls: number;
  cost: { baseline: number; optimized: number; optimizer: number };
}

/** report.md: the first line says which model ran (and that the stand-in is not a language model). */
export function renderReport(input: ReportInput): string {
  const { results: r, experiment, model, charts } = input;
  const out: string[] = [];
  const description = markdownCell(model.description);
  out.push(model.standIn
    ? `Model: ${description}. Its numbers show the pipeline and the optimizer at work, not what a language model scores; run with --lm or TYPELM_LM for that.`
    : `Model: ${description}.`);
  out.push("", `# ${markdownCell(r.experiment)}`, "", experiment.summary, "");
  const names = Object.keys(r.baseline.metrics);
  // results.json written before the statistics existed has no ci or comparison: the report goes without them.
  const withCi = r.baseline.ci !== undefined && r.optimized.ci !== undefined;
  out.push(withCi ? "| test split | baseline (95% CI) | optimized (95% CI) |" : "| test split | baseline | optimized |", "|---|---|---|");
  for (const name of names) {
    out.push(`| ${markdownCell(name)} | ${withInterval(r.baseline, name)} | ${withInterval(r.optimized, name)} |`);
  }
  out.push(`| failed examples | ${r.baseline.failures} / ${r.baseline.examples} | ${r.optimized.failures} / ${r.optimized.examples} |`, "");
  const comparisons = names.filter((name) => r.comparison?.[name] !== undefined);
  for (const name of comparisons) {
    const c = r.comparison[name]!;
    out.push(`**${markdownCell(name)}**, optimized − baseline: ${describeComparison(c)} (${c.better} examples better, ${c.worse} worse, of ${c.n}).`, "");
  }
  if (comparisons.length > 0) {
    out.push(
      "Baseline and optimized are paired by example id on the same test examples. The intervals are percentile bootstrap intervals " +
        "(2,000 resamples of the examples, seed 0; of the difference, paired); p is the exact McNemar test when every score is 0 or 1, " +
        "else a paired sign-flip permutation test.",
      "",
    );
  }

  const split = (s: string) => {
    const x = r.dataset.splits[s]!;
    return `${s} ${x.used} of ${x.rows} rows (sha256 \`${x.sha256}\`)`;
  };
  out.push(
    `- Dataset: ${markdownCode(r.dataset.name)}${r.dataset.licence ? ` (${markdownCell(r.dataset.licence)})` : ""}` +
      (r.dataset.source ? `, from ${markdownCell(r.dataset.source.repository)}${r.dataset.source.commit ? ` at ${markdownCell(r.dataset.source.commit)}` : ""}` : "") +
      `; see datasets/${markdownCell(r.dataset.name)}/ATTRIBUTION.md.`,
    `- Splits used: ${["train", "dev", "test"].map(split).join("; ")}.`,
    `- Seed ${r.seed}${r.limit === null ? "" : `, --limit ${r.limit}`}; typelm ${r.library.version}; MIPROv2 mode ${r.optimizer.mode}, kDemos ${r.optimizer.kDemos}, ${r.optimizer.trials.length} trials, best trial ${r.optimizer.bestTrial ?? "none"}.`,
    `- This run: ${input.providerCalls} provider requests (0 when every reply came from the LM cache), ` +
      `cost $${(input.cost.baseline + input.cost.optimizer + input.cost.optimized).toFixed(4)}; ` +
      `the optimized program is stored in the registry as "${markdownCell(r.experiment)}" (a new version each run). Timings are in the lab store (\`typelm runs\`).`,
    `- \`results.json\` holds these numbers; it is byte-identical between runs with the same inputs.`,
    "",
  );

  out.push("## Charts", "");
  for (const c of charts.files) out.push(`![${c.caption}](${c.file})`, "");
  for (const p of charts.problems) out.push(`Not drawn: ${markdownCell(p)}`, "");

  out.push("## Optimized program", "");
  for (const [path, p] of Object.entries(r.program)) {
    out.push(`### ${markdownCode(path)}`, "", "Instruction:", "", ...markdownQuote(p.instruction), "");
    if (p.demos.length === 0) out.push("No demos.", "");
    else {
      out.push("| demo | input | output |", "|---|---|---|");
      for (const d of p.demos) out.push(`| ${d.id === null ? "(no id)" : markdownCell(d.id)} | ${cell(d.input)} | ${cell(d.output)} |`);
      out.push("");
    }
  }

  out.push("## Optimizer trials", "", "| trial | kind | score | choices |", "|---|---|---|---|");
  for (const t of r.optimizer.trials) {
    out.push(`| ${t.index} | ${markdownCell(t.kind)} | ${t.error ? `failed: ${markdownCell(t.error)}` : fmt(t.score)} | ${markdownCell(JSON.stringify(t.choices))} |`);
  }
  out.push("");
  confusion(out, "baseline", r.baseline);
  confusion(out, "optimized", r.optimized);
  return out.join("\n").replace(/\n+$/, "\n");
}

function confusion(out: string[], which: string, e: EvaluationResult): void {
  if (e.confusion === null) return;
  const { field, labels, matrix, unanswered } = e.confusion;
  out.push(`## Confusion matrix, ${which} (${markdownCode(field)}: rows expected, columns predicted)`, "");
  out.push(`| expected \\ predicted | ${labels.map(markdownCell).join(" | ")} | no answer |`, `|---|${labels.map(() => "---|").join("")}---|`);
  labels.forEach((label, i) => out.push(`| ${markdownCell(label)} | ${matrix[i]!.join(" | ")} | ${unanswered[i]} |`));
  out.push("");
  if (e.perLabel !== null) {
    out.push("| label | precision | recall | F1 | support |", "|---|---|---|---|---|");
    for (const [label, s] of Object.entries(e.perLabel)) out.push(`| ${markdownCell(label)} | ${fmt(s.precision)} | ${fmt(s.recall)} | ${fmt(s.f1)} | ${s.support} |`);
    out.push("");
  }
}

/** "0.452 (0.356–0.548)": the value and its 95% interval, when results.json has it. */
function withInterval(e: EvaluationResult, name: string): string {
  const interval = e.ci?.[name];
  return interval === undefined ? fmt(e.metrics[name]) : `${fmt(e.metrics[name])} (${fmt(interval[0])}–${fmt(interval[1])})`;
}

function fmt(value: number | null | undefined): string {
  return value === null || value === undefined ? "–" : value.toFixed(3);
}

/** A demo's input or output fields as one table cell: "field: value; field: value". */
function cell(value: Record<string, unknown>): string {
  return markdownCell(Object.entries(value).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("; "));
}
