// The optimization page's trials chart, drawn on the server: a vega-lite specification compiled to vega
// and rendered to SVG markup by vega's headless View (renderer "none"), as the notebooks draw theirs.
// vega and vega-lite are loaded here with `import()` when the first optimization page is drawn, never
// when the viewer starts. The page embeds the SVG as it is: vega writes every text and attribute value
// escaped (&, <, >, and " in attributes), and the chart has no links and no expressions built from
// stored text, so a stored trial kind can only ever be text in it.
import { candidatePoints } from "../notebook/candidates.js";
import { missingPackageOf, loadOptional } from "../optional.js";
import type { Trial } from "../store/records.js";
import { html, Markup } from "./html.js";

/** The chart's plot size in CSS pixels (the axes and the legend come on top). */
export const CHART_WIDTH = 640;
export const CHART_HEIGHT = 220;

/** Pixels kept free at both ends of each axis (more than the returned trial's ring's radius, 9.1). */
export const EDGE_PADDING = 12;

/** The name of the trials' point layer: its marks are the group `<g class="... trials_marks">` of the SVG. */
export const TRIALS_LAYER = "trials";

const FEATURE = "The viewer's trials chart";

/** The vega-lite specification of the trials chart: score by trial, the best so far, the returned trial ringed. */
export function trialsChartSpec(trials: readonly Trial[], best: number | null): Record<string, unknown> {
  // Each point's label (its aria-label in the SVG): "trial 3 (candidate): 0.610".
  const points = candidatePoints(trials).map((p) => ({ ...p, returned: p.trial === best, label: `trial ${p.trial} (${p.kind}): ${p.score.toFixed(3)}` }));
  const scores = points.map((p) => p.score);
  // Each scale keeps EDGE_PADDING pixels at both ends: a point at the first or last trial, or at a score
  // of 0 or 1, is drawn whole (the returned trial's ring too) rather than cut by the axes.
  const x = { field: "trial", type: "quantitative", title: "trial", axis: { tickMinStep: 1, format: "d" }, scale: { padding: EDGE_PADDING, nice: false, zero: false } };
  // Scores are in [0, 1]; a metric outside it widens the axis rather than being drawn off the chart.
  const y = { field: "score", type: "quantitative", title: "score", scale: { domain: [Math.min(0, ...scores), Math.max(1, ...scores)], padding: EDGE_PADDING } };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    width: CHART_WIDTH,
    height: CHART_HEIGHT,
    background: "white",
    config: { axis: { labelFontSize: 11, titleFontSize: 12 }, legend: { labelLimit: 240 } },
    layer: [
      {
        data: { values: points.filter((p) => p.best !== null) },
        mark: { type: "line", interpolate: "step-after", color: "#9fb3d1", strokeWidth: 2 },
        encoding: { x, y: { ...y, field: "best" }, description: { value: "best score so far" } },
      },
      {
        name: TRIALS_LAYER,
        data: { values: points },
        mark: { type: "point", filled: true, size: 60, opacity: 0.9 },
        encoding: {
          x,
          y,
          color: { field: "kind", type: "nominal", title: "trial kind" },
          description: { field: "label" },
        },
      },
      {
        data: { values: points.filter((p) => p.returned) },
        mark: { type: "point", filled: false, size: 260, strokeWidth: 2, color: "#d4a017" },
        encoding: { x, y, description: { value: "the returned trial" } },
      },
    ],
  };
}

/** Draws `spec` to SVG markup in Node (vega-lite → vega → vega's headless SVG renderer). */
export async function chartSvg(spec: Record<string, unknown>): Promise<string> {
  // One after the other: vega-lite imports parts of vega (see lib/notebook/chart.ts).
  const vega = await loadOptional<typeof import("vega")>("vega", FEATURE);
  const vegaLite = await loadOptional<typeof import("vega-lite")>("vega-lite", FEATURE);
  const view = new vega.View(vega.parse(vegaLite.compile(spec as never).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * The trials chart of an optimization page as markup: the SVG vega drew, or a note when no trial is
 * scored yet or when vega or vega-lite (optional peers) are not installed.
 */
export async function trialsChart(trials: readonly Trial[], best: number | null): Promise<Markup> {
  if (!trials.some((t) => t.score !== null)) return html`<p class="muted">No trial scored yet.</p>`;
  let svg: string;
  try {
    svg = await chartSvg(trialsChartSpec(trials, best));
  } catch (error) {
    const missing = missingPackageOf(error);
    if (missing === undefined) throw error;
    return html`<p class="muted" id="trials-chart-missing">The trials chart needs the "${missing.package}" package: ${missing.install}</p>`;
  }
  // vega's SVG output escapes every value it writes (see the head of this file).
  return html`<figure id="trials-chart">${new Markup(svg)}</figure>
<p class="muted">Each point is a trial's score, coloured by its kind; the line is the best full score so far; the returned trial is ringed.</p>`;
}
