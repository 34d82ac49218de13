import { loadOptional } from "../optional.js";
import { escapeHtml } from "./html.js";
import type { MimeBundle } from "./bundle.js";

/** A vega-lite (v5 schema) specification with its data inline. Kept loose so the public types need no vega-lite types. */
export type VegaLiteSpec = Record<string, unknown>;

/** A chart drawn in Node by `renderChart`: its PNG bytes and CSS size. */
export interface RenderedChart {
  /** PNG bytes, drawn at twice the chart's CSS size. */
  png: Uint8Array;
  /** CSS pixel size of the chart (the PNG is twice that). */
  width: number;
  height: number;
}

const SCALE = 2;
const SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

/** Common look: DejaVu Sans (installed by .ci/run), white background. */
export function withDefaults(spec: VegaLiteSpec): VegaLiteSpec {
  return {
    $schema: SCHEMA,
    background: "white",
    config: { font: "DejaVu Sans", axis: { labelFontSize: 11, titleFontSize: 12 }, title: { fontSize: 14 } },
    ...spec,
  };
}

/** What needs the chart renderers, in the error raised when one is not installed. */
const FEATURE = "Drawing a chart";

/**
 * Draws a vega-lite chart to PNG in Node: vega-lite → vega → SVG (vega's headless "none" renderer) →
 * PNG with resvg. vega and vega-lite are ESM-only with a top-level await, so they are loaded here with a
 * real `import()` (never `require`, which a tslab cell would do), and only when a chart is drawn.
 * They are optional peer dependencies: without one, a ConfigurationError gives the `npm install` line.
 */
export async function renderChart(spec: VegaLiteSpec): Promise<RenderedChart> {
  // One after the other: vega-lite imports parts of vega, and jest's ESM loader fails on concurrent
  // imports of a shared module graph ("request for './accessor.js' is not in cache").
  const vega = await loadOptional<typeof import("vega")>("vega", FEATURE);
  const vegaLite = await loadOptional<typeof import("vega-lite")>("vega-lite", FEATURE);
  const resvg = await loadOptional<typeof import("@resvg/resvg-js")>("@resvg/resvg-js", FEATURE);
  const compiled = vegaLite.compile(spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  let svg: string;
  try {
    svg = await view.toSVG();
  } finally {
    view.finalize();
  }
  // Without the font options resvg falls back to DejaVu Serif and loses bold titles (TOOLCHAIN §3).
  const image = new resvg.Resvg(svg, {
    fitTo: { mode: "zoom", value: SCALE },
    background: "white",
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans", sansSerifFamily: "DejaVu Sans" },
  }).render();
  return { png: new Uint8Array(image.asPng()), width: Math.round(image.width / SCALE), height: Math.round(image.height / SCALE) };
}

/**
 * The bundle of a chart: vega-lite for viewers that draw it (JupyterLab), the PNG for the rest, and HTML
 * that embeds the same PNG (classic Notebook and nbconvert prefer HTML, and nbconvert drops vega-lite
 * and strips inline SVG). `htmlAfter` (already escaped) goes under the image, e.g. a table of the data.
 */
export async function chartBundle(spec: VegaLiteSpec, alt: string, text: string, htmlAfter = ""): Promise<MimeBundle> {
  const full = withDefaults(spec);
  // vega tags the data objects it ingests (Symbol(vega_id)): draw from a copy so the spec stays plain.
  const chart = await renderChart(structuredClone(full));
  const png = Buffer.from(chart.png).toString("base64");
  const img = `<img src="data:image/png;base64,${png}" width="${chart.width}" height="${chart.height}" alt="${escapeHtml(alt)}">`;
  return {
    "text/html": `<div class="typelm-chart">${img}${htmlAfter}</div>`,
    "application/vnd.vegalite.v5+json": full,
    "image/png": png,
    "text/plain": text,
  };
}
