import { ValidationError } from "../errors.js";
import type { OptimizationRun, Trial } from "../store/records.js";
import { show, type MimeBundle } from "./bundle.js";
import { chartBundle, type VegaLiteSpec } from "./chart.js";
import { formatNumber, htmlTable, textTable, type Cell } from "./html.js";
import { expectObject } from "./input.js";

/** What the candidates chart reads from a run: its trials (the rest of an `OptimizationRun` is optional). */
export type CandidatesInput = Pick<OptimizationRun, "trials"> & Partial<Pick<OptimizationRun, "name" | "bestTrial" | "id" | "summary">>;

/**
 * The label of a score that chose a configuration: the search picked the configuration for that very
 * score, so it is optimistic (a held-out test score is the one to quote). GEPA without validation
 * examples chose on its training examples.
 */
export function chosenLabel(run: Pick<CandidatesInput, "summary">): string {
  return run.summary?.validation === "training" ? "training examples (chosen on them)" : "validation (chosen on it)";
}

// GEPA's rejected proposals were scored on a minibatch only, like MIPROv2's minibatch trials.
const isMinibatch = (t: Trial) => /minibatch|rejected/i.test(t.kind);

/** Minibatch scores are noisy and bootstrap scores are on training traces: neither sets the best score. */
const setsBest = (t: Trial) => !isMinibatch(t) && !/bootstrap/i.test(t.kind);

/** Per trial: its score and the best full-evaluation score so far. */
export function candidatePoints(trials: readonly Trial[]): { trial: number; kind: string; score: number; best: number | null }[] {
  let best: number | null = null;
  const points = [];
  for (const t of [...trials].sort((a, b) => a.index - b.index)) {
    if (t.score !== null && setsBest(t)) best = best === null ? t.score : Math.max(best, t.score);
    if (t.score !== null) points.push({ trial: t.index, kind: isMinibatch(t) ? "minibatch" : t.kind, score: t.score, best });
  }
  return points;
}

function scoreChart(run: CandidatesInput): VegaLiteSpec {
  const points = candidatePoints(run.trials);
  const on = run.summary?.validation === "training" ? "training-example" : "validation";
  const x = { field: "trial", type: "quantitative", title: "trial", axis: { tickMinStep: 1 } };
  const y = { field: "score", type: "quantitative", title: "score", scale: { domain: [0, 1] } };
  return {
    title: `Score per trial (green: best ${on} score so far, chosen on it)`,
    width: 480,
    height: 240,
    layer: [
      {
        data: { values: points.filter((p) => p.best !== null) },
        mark: { type: "line", interpolate: "step-after", color: "#2ca02c", strokeWidth: 2 },
        encoding: { x, y: { ...y, field: "best" } },
      },
      {
        data: { values: points },
        mark: { type: "point", filled: true, size: 60 },
        encoding: {
          x,
          y,
          color: { field: "kind", type: "nominal", title: "trial kind" },
          shape: { field: "kind", type: "nominal", title: "trial kind" },
          tooltip: [{ field: "trial" }, { field: "kind" }, { field: "score" }],
        },
      },
    ],
  };
}

/**
 * The candidate tree of a GEPA-style run: each candidate placed by generation (1 + its deepest
 * parent's) and drawn with links to its parents, coloured by score.
 */
export function candidateTree(trials: readonly Trial[]): { nodes: { trial: number; generation: number; row: number; score: number | null }[]; edges: { from: number; to: number }[] } {
  const byIndex = new Map(trials.map((t) => [t.index, t]));
  const generation = new Map<number, number>();
  const depth = (t: Trial, seen: Set<number>): number => {
    if (generation.has(t.index)) return generation.get(t.index)!;
    const parents = (t.parents ?? []).map((p) => byIndex.get(p)).filter((p): p is Trial => !!p && !seen.has(p.index));
    const g = parents.length ? 1 + Math.max(...parents.map((p) => depth(p, new Set([...seen, t.index])))) : 0;
    generation.set(t.index, g);
    return g;
  };
  const rows = new Map<number, number>();
  const nodes = [...trials]
    .sort((a, b) => a.index - b.index)
    .map((t) => {
      const g = depth(t, new Set());
      const row = rows.get(g) ?? 0;
      rows.set(g, row + 1);
      return { trial: t.index, generation: g, row, score: t.score };
    });
  const edges = trials.flatMap((t) => (t.parents ?? []).filter((p) => byIndex.has(p)).map((p) => ({ from: p, to: t.index })));
  return { nodes, edges };
}

function treeChart(trials: readonly Trial[]): VegaLiteSpec {
  // The tree holds the candidates kept (scored on the full set); rejected proposals are in the table.
  const { nodes, edges } = candidateTree(trials.filter((t) => !isMinibatch(t)));
  const at = new Map(nodes.map((n) => [n.trial, n]));
  const links = edges.map((e) => ({ generation: at.get(e.from)!.generation, row: at.get(e.from)!.row, generation2: at.get(e.to)!.generation, row2: at.get(e.to)!.row }));
  const x = { field: "generation", type: "quantitative", title: "generation", axis: { tickMinStep: 1 } };
  const rowCount = Math.max(...nodes.map((n) => n.row + 1));
  const y = { field: "row", type: "quantitative", title: null, axis: null, scale: { reverse: true, domain: [-0.6, rowCount - 0.4] } };
  const labelled = nodes.map((n) => ({ ...n, label: `#${n.trial} ${n.score === null ? "failed" : n.score.toFixed(2)}` }));
  return {
    title: "Candidate tree (links from parents)",
    width: 480,
    height: Math.max(120, 36 * rowCount),
    layer: [
      { data: { values: links }, mark: { type: "rule", color: "#999" }, encoding: { x, y, x2: { field: "generation2" }, y2: { field: "row2" } } },
      {
        data: { values: labelled },
        mark: { type: "circle", size: 160, stroke: "#333", strokeWidth: 0.5 },
        encoding: { x, y, color: { field: "score", type: "quantitative", title: "score", scale: { scheme: "viridis", domain: [0, 1] } } },
      },
      { data: { values: labelled }, mark: { type: "text", dy: -12, fontSize: 10 }, encoding: { x, y, text: { field: "label" } } },
    ],
  };
}

function chartSpec(run: CandidatesInput): VegaLiteSpec {
  const scores = scoreChart(run);
  if (!run.trials.some((t) => t.parents?.length)) return { ...scores, title: `${run.name ?? "Optimization"}: ${scores.title}` };
  return { title: run.name ?? "Optimization", vconcat: [scores, treeChart(run.trials)], resolve: { scale: { color: "independent", shape: "independent" } } };
}

const short = (text: string, max = 160) => (text.length > max ? text.slice(0, max - 1) + "…" : text);

function trialRows(run: CandidatesInput): (string | Cell)[][] {
  return [...run.trials]
    .sort((a, b) => a.index - b.index)
    .map((t) => {
      const highlight = t.error ? "background:#fdecea" : t.index === run.bestTrial ? "background:#e8f5e9;font-weight:bold" : undefined;
      const instructions = Object.entries(t.instructions ?? {}).map(([p, i]) => `${p}: ${short(i)}`).join("\n");
      const demos = Object.entries(t.demoIds ?? {}).map(([p, ids]) => `${p}: ${ids.length ? ids.join(", ") : "(none)"}`).join("\n");
      const cells = [
        String(t.index) + (t.index === run.bestTrial ? " ★" : ""),
        t.kind,
        t.parents?.length ? t.parents.join(", ") : "",
        t.error ? `failed: ${t.error}` : formatNumber(t.score) + (t.index === run.bestTrial ? ` — ${chosenLabel(run)}` : ""),
        instructions,
        demos,
      ];
      return cells.map((text) => (highlight ? { text, style: highlight } : text));
    });
}

/**
 * The candidates bundle: a score-per-trial chart (with the parent tree for GEPA) and a table of what
 * each trial tried. The best score, and the returned trial's score in the table, are labelled
 * "validation (chosen on it)".
 */
export async function candidatesBundle(run: CandidatesInput): Promise<MimeBundle> {
  const expected = "an optimization run (optimizer.lastRun after compile, or lab.run(id))";
  expectObject(run, "display.candidates", expected);
  if (!Array.isArray(run.trials)) throw new ValidationError(`display.candidates expects ${expected}; received an object without trials`, { field: "display.candidates" });
  const headers = ["trial", "kind", "parents", "score", "instructions", "demo ids"];
  const rows = trialRows(run);
  const points = candidatePoints(run.trials);
  const best = points.reduce<number | null>((b, p) => (p.best === null ? b : p.best), null);
  const summary = `${run.name ?? "Optimization"}: ${run.trials.length} trials, best score ${formatNumber(best)}, ${chosenLabel(run)}`;
  return chartBundle(chartSpec(run), summary, `${summary}\n${textTable(headers, rows)}`, htmlTable(headers, rows));
}

/** Shows an optimizer run's trials in a notebook; returns the bundle outside one. */
export async function displayCandidates(run: CandidatesInput): Promise<MimeBundle | undefined> {
  return show(await candidatesBundle(run));
}
