// lib/lab/report/: what a run writes for people — report.md (this file, with its charts), text made
// safe for Markdown (markdown.ts), and the report folder written whole under a lock (folder.ts).
import { describeComparison, describeMde, pValueText, signed, significanceWords } from "../../evaluate/compare.js";
import type { EvaluationReport } from "../../evaluate/report.js";
import type { OptimizationRun } from "../../store/records.js";
import { missingPackageOf, type MissingPackage } from "../../optional.js";
import { markdownCell, markdownCode, markdownQuote } from "./markdown.js";
import type { ModelChoice } from "../experiment/model-choice.js";
import type { EvaluationResult, ReproduceResults } from "../experiment/reproduce.js";

export interface Charts {
  /** File names written beside report.md, with their captions. */
  files: { file: string; caption: string }[];
  problems: string[];
  /**
   * Set when no chart was drawn because a chart renderer (vega, vega-lite, @resvg/resvg-js: optional
   * peer dependencies) is not installed: which one, and the command that installs them.
   */
  skipped?: MissingPackage;
}

/** One model's evaluations and optimizer run, for the charts. */
export interface ChartModel {
  id: string;
  baseline: EvaluationReport;
  optimized: EvaluationReport | null;
  run: OptimizationRun | undefined;
}

/**
 * Draws the test metrics (before/after, grouped by model when there are several) and each optimizer
 * run's candidates as PNGs (typelm/notebook's charts), each handed to `write` with its file name.
 */
export async function drawCharts(write: (file: string, png: Buffer) => void, models: readonly ChartModel[]): Promise<Charts> {
  const charts: Charts = { files: [], problems: [] };
  const draw = async (file: string, caption: string, bundle: () => Promise<{ "image/png"?: string }>): Promise<void> => {
    // Without the renderers no chart can be drawn: the first attempt says so, the rest are not tried.
    if (charts.skipped !== undefined) return;
    try {
      const png = (await bundle())["image/png"];
      if (png === undefined) throw new Error("the chart bundle has no image/png");
      write(file, Buffer.from(png, "base64"));
      charts.files.push({ file, caption });
    } catch (error) {
      const missing = missingPackageOf(error);
      if (missing !== undefined) charts.skipped = missing;
      else charts.problems.push(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const several = models.length > 1;
  const reports: EvaluationReport[] = [];
  const labels: string[] = [];
  for (const m of models) {
    reports.push(m.baseline);
    labels.push(several ? `${m.id} baseline` : "baseline");
    if (m.optimized !== null) {
      reports.push(m.optimized);
      labels.push(several ? `${m.id} optimized` : "optimized");
    }
  }
  const withOptimizer = models.some((m) => m.optimized !== null);
  await draw("metrics.png", several ? "Test metrics by model, before and after optimization" : withOptimizer ? "Test metrics before and after optimization" : "Test metrics", async () => {
    const { metricsBundle } = await import("../../notebook/metrics.js");
    return metricsBundle(reports, { labels });
  });
  for (const m of models) {
    const run = m.run;
    if (run === undefined) continue;
    const file = several ? `candidates-${m.id.replace(/[^A-Za-z0-9._-]+/g, "-")}.png` : "candidates.png";
    await draw(file, `${several ? `${m.id}: ` : ""}${run.name} trials: score per trial${run.name === "MIPROv2" ? ", minibatch and full validation" : ""}, best so far`, async () => {
      const { candidatesBundle } = await import("../../notebook/candidates.js");
      return candidatesBundle(run);
    });
  }
  return charts;
}

/**
 * Why the charts are missing and how to get them, as one sentence (the command line prints it; the
 * report has it with the command as code).
 */
export function chartsSkippedLine(skipped: MissingPackage, format: "text" | "markdown" = "text"): string {
  const name = format === "markdown" ? markdownCode(skipped.package) : `"${skipped.package}"`;
  const install = format === "markdown" ? markdownCode(skipped.install) : skipped.install;
  return `Charts skipped: the chart renderer ${name} is not installed; to draw them, run ${install} and run again`;
}

export interface ReportInput {
  results: ReproduceResults;
  /** One sentence on what the experiment shows (may be empty). */
  summary: string;
  /** Each model that ran, in order (their descriptions open the report). */
  models: readonly Pick<ModelChoice, "id" | "description" | "standIn">[];
  charts: Charts;
  providerCalls: number;
  cost: { baseline: number; optimized: number; optimizer: number };
  /** Whether an optimized program went into the registry. */
  registered: boolean;
  /** Whether the dataset is one of the bundled ones (its ATTRIBUTION.md is in datasets/). */
  bundledDataset: boolean;
}

/** report.md: the first line says which model ran (and that the stand-in is not a language model). */
export function renderReport(input: ReportInput): string {
  const { results: r, charts } = input;
  const out: string[] = [];
  const several = input.models.length > 1;
  const standInNote = "Its numbers show the pipeline and the optimizer at work, not what a language model scores; run with --lm or TYPELM_LM for that.";
  if (!several) {
    const model = input.models[0]!;
    const description = markdownCell(model.description);
    out.push(model.standIn ? `Model: ${description}. ${standInNote}` : `Model: ${description}.`);
  } else {
    out.push(`Models: ${input.models.map((m) => markdownCell(m.description)).join("; ")}.${input.models.some((m) => m.standIn) ? ` The stand-in is not a language model. ${standInNote}` : ""}`);
  }
  out.push("", `# ${markdownCell(r.experiment)}`, "");
  if (input.summary !== "") out.push(markdownCell(input.summary), "");
  // One model: its part is the top-level fields (as before results.json had `models`).
  const models = several && r.models !== undefined
    ? Object.values(r.models)
    : [{
      model: r.model, baseline: r.baseline, optimized: r.optimized, comparison: r.comparison ?? {}, optimizer: r.optimizer, program: r.program,
      seeds: r.models?.[r.model.id]?.seeds, gain: r.models?.[r.model.id]?.gain,
    }];
  const names = Object.keys(r.baseline.metrics);
  if (!several) {
    const optimized = r.optimized;
    // results.json written before the statistics existed has no ci or comparison: the report goes without them.
    const withCi = r.baseline.ci !== undefined && (optimized === null || optimized.ci !== undefined);
    if (optimized === null) {
      out.push(withCi ? "| test split | baseline (95% CI) |" : "| test split | baseline |", "|---|---|");
      for (const name of names) out.push(`| ${markdownCell(name)} | ${withInterval(r.baseline, name)} |`);
      out.push(`| failed examples | ${r.baseline.failures} / ${r.baseline.examples} |`, "");
      intervalNote(out, [r.baseline]);
    } else {
      out.push(withCi ? "| test split | baseline (95% CI) | optimized (95% CI) |" : "| test split | baseline | optimized |", "|---|---|---|");
      for (const name of names) out.push(`| ${markdownCell(name)} | ${withInterval(r.baseline, name)} | ${withInterval(optimized, name)} |`);
      out.push(`| failed examples | ${r.baseline.failures} / ${r.baseline.examples} | ${optimized.failures} / ${optimized.examples} |`, "");
      intervalNote(out, [r.baseline, optimized]);
    }
    const comparisons = names.filter((name) => r.comparison?.[name] !== undefined);
    for (const name of comparisons) {
      const c = r.comparison[name]!;
      out.push(`**${markdownCell(name)}**, optimized − baseline: ${describeComparison(c)} (${c.better} examples better, ${c.worse} worse, of ${c.n}).`, "");
    }
    if (comparisons.length > 0) out.push(PAIRED_NOTE, "");
  } else {
    out.push("| model | metric | baseline (95% CI) | optimized (95% CI) | optimized − baseline (95% CI) | p | p (Holm) | verdict |", "|---|---|---|---|---|---|---|---|");
    for (const m of models) {
      for (const name of names) {
        const c = m.comparison[name];
        out.push(
          `| ${markdownCode(m.model.id)} | ${markdownCell(name)} | ${withInterval(m.baseline, name)} | ${m.optimized === null ? "–" : withInterval(m.optimized, name)} | ` +
            (c === undefined ? "– | – | – | |" : `${signed(c.diff)} (${signed(c.ci[0])} to ${signed(c.ci[1])}) | ${pValueText(c.pValue)} | ${c.pAdjusted === undefined ? "–" : pValueText(c.pAdjusted)} | ` +
              `${significanceWords(c)}${c.significant || c.mde === undefined ? "" : `; ${describeMde(c.mde)}`} |`),
        );
      }
      out.push(`| ${markdownCode(m.model.id)} | failed examples | ${m.baseline.failures} / ${m.baseline.examples} | ${m.optimized === null ? "–" : `${m.optimized.failures} / ${m.optimized.examples}`} | | | | |`);
    }
    out.push("");
    intervalNote(out, models.flatMap((m) => (m.optimized === null ? [m.baseline] : [m.baseline, m.optimized])));
    if (models.some((m) => Object.keys(m.comparison).length > 0)) out.push(PAIRED_NOTE, "");
  }

  // The evaluations' warnings (a judge that gave every row one verdict), each under the table.
  for (const m of models) {
    const tag = several ? ` (${markdownCode(m.model.id)})` : "";
    for (const [which, result] of [["baseline", m.baseline], ["optimized", m.optimized]] as const) {
      for (const w of result?.warnings ?? []) out.push(`**Warning** (${which}${tag}): ${markdownCell(w)}`, "");
    }
  }

  const split = (s: string) => {
    const x = r.dataset.splits[s]!;
    return `${s} ${x.used} of ${x.rows} rows (sha256 \`${x.sha256}\`)`;
  };
  const optimizerLine = r.optimizer === null
    ? "no optimizer"
    : `${markdownCell(r.optimizer.name)}${r.optimizer.mode === null ? "" : ` mode ${markdownCell(r.optimizer.mode)}`}${r.optimizer.kDemos === null ? "" : `, kDemos ${r.optimizer.kDemos}`}, ` +
      (several ? models.map((m) => `${markdownCode(m.model.id)} ${m.optimizer?.trials.length ?? 0} trials, best trial ${m.optimizer?.bestTrial ?? "none"}`).join("; ") : `${r.optimizer.trials.length} trials, best trial ${r.optimizer.bestTrial ?? "none"}`);
  out.push(
    `- Dataset: ${markdownCode(r.dataset.name)}${r.dataset.licence ? ` (${markdownCell(r.dataset.licence)})` : ""}` +
      (r.dataset.source ? `, from ${markdownCell(r.dataset.source.repository)}${r.dataset.source.commit ? ` at ${markdownCell(r.dataset.source.commit)}` : ""}` : "") +
      (input.bundledDataset ? `; see datasets/${markdownCell(r.dataset.name)}/ATTRIBUTION.md.` : "."),
    `- Splits used: ${["train", "dev", "test"].map(split).join("; ")}.`,
    `- Seed ${r.seed}${r.limit === null ? "" : `, --limit ${r.limit}`}; typelm ${r.library.version}; ${optimizerLine}.`,
    `- This run: ${input.providerCalls} provider requests (0 when every reply came from the LM cache), ` +
      `cost $${(input.cost.baseline + input.cost.optimizer + input.cost.optimized).toFixed(4)}; ` +
      (input.registered ? `the optimized program is stored in the registry as "${markdownCell(r.experiment)}" (a new version each run). ` : "") +
      "Timings are in the lab store (`typelm runs`).",
    `- \`results.json\` holds these numbers; it is byte-identical between runs with the same inputs.`,
    "",
  );

  out.push("## Charts", "");
  if (charts.skipped !== undefined) out.push(`${chartsSkippedLine(charts.skipped, "markdown")}.`, "");
  for (const c of charts.files) out.push(`![${markdownCell(c.caption)}](${c.file})`, "");
  for (const p of charts.problems) out.push(`Not drawn: ${markdownCell(p)}`, "");

  for (const m of models) {
    const title = several ? ` (${markdownCode(m.model.id)})` : "";
    out.push(`## ${m.optimized === null ? "Program" : "Optimized program"}${title}`, "");
    for (const [path, p] of Object.entries(m.program)) {
      out.push(`### ${markdownCode(path)}`, "", "Instruction:", "", ...markdownQuote(p.instruction), "");
      if (p.demos.length === 0) out.push("No demos.", "");
      else {
        out.push("| demo | input | output |", "|---|---|---|");
        for (const d of p.demos) out.push(`| ${d.id === null ? "(no id)" : markdownCell(d.id)} | ${cell(d.input)} | ${cell(d.output)} |`);
        out.push("");
      }
    }
    if (m.seeds !== undefined && m.gain !== undefined) {
      const metric = markdownCell(names[0] ?? "metric");
      out.push(
        `## Seeds${title}`, "",
        `The optimizer ran from ${m.seeds.length} seeds; each optimized program was evaluated on the test split (${metric}). ` +
          `The program above is the first seed's.`, "",
        "| seed | baseline | optimized | optimized − baseline | p |", "|---|---|---|---|---|",
      );
      for (const x of m.seeds) out.push(`| ${x.seed} | ${fmt(x.baseline)} | ${fmt(x.optimized)} | ${signed(x.diff)} | ${pValueText(x.pValue)} |`);
      out.push("", `Gain over the seeds: mean ${signed(m.gain.mean)}, sd ${fmt(m.gain.sd)}, min ${signed(m.gain.min)}, max ${signed(m.gain.max)}.`, "");
    }
    if (m.optimizer !== null) {
      out.push(
        `## Optimizer trials${title}`, "",
        "Scores are on the validation examples. The returned trial was chosen on them, so its score is optimistic: " +
          "the test split above is the number to trust.", "",
        "| trial | kind | validation score | choices |", "|---|---|---|---|",
      );
      for (const t of m.optimizer.trials) {
        const chosen = t.index === m.optimizer.bestTrial && !t.error ? " (chosen on it)" : "";
        out.push(`| ${t.index} | ${markdownCell(t.kind)} | ${t.error ? `failed: ${markdownCell(t.error)}` : `${fmt(t.score)}${chosen}`} | ${markdownCell(JSON.stringify(t.choices))} |`);
      }
      out.push("");
    }
    confusion(out, `baseline${several ? `, ${markdownCode(m.model.id)}` : ""}`, m.baseline);
    if (m.optimized !== null) confusion(out, `optimized${several ? `, ${markdownCode(m.model.id)}` : ""}`, m.optimized);
  }
  return out.join("\n").replace(/\n+$/, "\n");
}

const PAIRED_NOTE =
  "Baseline and optimized are paired by example id on the same test examples. When every score is 0 or 1, p is the exact McNemar test " +
  "and the difference's interval the Clopper–Pearson interval of the changed examples' split (scaled to a difference), so the interval " +
  "excludes 0 exactly when p < 0.05; f1_score is tested by permuting the two predictions of each example (macro-F1 recomputed), other " +
  "metrics by a paired sign-flip test, each with the interval of the shifts that same test does not reject (it too excludes 0 exactly " +
  "when p < 0.05). p (Holm) adjusts p over " +
  "every comparison of this report; the first metric is the primary one. mde is the smallest true difference this test detects with " +
  "80% power.";

const METHOD_WORDS: Record<string, string> = {
  wilson: "modified Wilson interval (Brown, Cai & DasGupta)",
  "bootstrap-bca": "BCa bootstrap interval (2,000 resamples of the examples, seed 0)",
  "clopper-pearson": "Clopper–Pearson interval",
  "sign-flip-inversion": "interval of the shifts the sign-flip test does not reject",
  "permutation-macro-f1-inversion": "interval of the shifts the macro-F1 permutation test does not reject",
};

/** One line naming each metric's interval method, when results.json records them. */
function intervalNote(out: string[], evaluations: readonly EvaluationResult[]): void {
  const methods = new Map<string, string>();
  for (const e of evaluations) for (const [name, method] of Object.entries(e.ciMethod ?? {})) if (!methods.has(name)) methods.set(name, method);
  if (methods.size === 0) return;
  out.push(`Intervals: ${[...methods].map(([name, method]) => `${markdownCell(name)} ${METHOD_WORDS[method] ?? markdownCell(method)}`).join("; ")}.`, "");
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
