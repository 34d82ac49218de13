/**
 * The optimization page's trials chart: drawn on the server by vega from a vega-lite specification and
 * served as SVG markup in the page. One point per scored trial, placed at its score; the stored trial
 * kinds and the run's name, hostile text included, reach the page only escaped.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { Trial } from "../../lib/store/records.js";
import { CHART_HEIGHT, CHART_WIDTH, chartSvg, trialsChartSpec } from "../../lib/view/chart.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";

const IMG = `<img src=x onerror=alert(1)>`;
const QUOTE = `"><svg onload="alert(2)">`;

/** The trials as written: index, kind, score (null: the trial failed). */
const TRIALS: [number, string, number | null][] = [
  [0, "baseline", 0.42],
  [1, IMG, 0.9],
  [2, "candidate", null],
  [3, QUOTE, 0.61],
  [4, "candidate", 0.75],
];
const RETURNED = 1;

function trial(index: number, kind: string, score: number | null): Trial {
  return {
    index, kind, parents: [], choices: {}, instructions: { self: `instruction ${index}` }, demoIds: { self: [] }, score, exampleScores: null,
    budgetSpent: index, lmCalls: 1, inputTokens: 1, outputTokens: 1, cost: 0, durationMs: 1, error: score === null ? "Error: failed" : null, data: {}, reused: 0,
  };
}

/** The `<g ...>` element whose class list has `cls`, with its whole content (vega nests groups). */
function group(svg: string, cls: string): string {
  const open = new RegExp(`<g [^>]*class="[^"]*\\b${cls}\\b[^"]*"[^>]*>`).exec(svg);
  if (open === null) throw new Error(`no group ${cls} in the chart`);
  let depth = 0;
  const tags = /<g\b[^>]*?(\/?)>|<\/g>/g;
  tags.lastIndex = open.index;
  for (let m = tags.exec(svg); m !== null; m = tags.exec(svg)) {
    if (m[0] === "</g>") depth--;
    else if (m[1] !== "/") depth++;
    if (depth === 0) return svg.slice(open.index, m.index + m[0].length);
  }
  throw new Error(`group ${cls} is not closed`);
}

/** Each `<path>` of a mark group: its position (the translate of a symbol) and its aria-label, unescaped. */
function symbols(markGroup: string): { x: number; y: number; label: string }[] {
  return [...markGroup.matchAll(/<path\b([^>]*)>/g)].map((m) => {
    const attrs = m[1]!;
    const t = /transform="translate\(([-\d.]+),([-\d.]+)\)"/.exec(attrs);
    const label = /aria-label="([^"]*)"/.exec(attrs)?.[1] ?? "";
    return {
      x: Number(t?.[1]), y: Number(t?.[2]),
      label: label.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"),
    };
  });
}

describe("the trials chart", () => {
  let dir: string;
  let viewer: Viewer;
  let runId: string;
  let html: string;
  let svg: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "typelm-chart-"));
    const path = join(dir, "lab.sqlite");
    const lab = LabStore.open(path);
    runId = lab.startRun({ kind: "optimization", name: `GEPA ${IMG}`, config: {} });
    for (const [index, kind, score] of TRIALS) lab.recordTrial(runId, trial(index, kind, score));
    lab.finishRun(runId, { status: "completed", score: 0.9, bestTrial: RETURNED, summary: {} });
    lab.close();
    closeStoreSync(path);
    viewer = await startViewer({ store: path, port: 0 });
    const response = await fetch(`${viewer.url}runs/${runId}`);
    expect(response.status).toBe(200);
    html = await response.text();
    const figure = /<figure id="trials-chart">([\s\S]*?)<\/figure>/.exec(html);
    if (figure === null) throw new Error("the page has no trials chart");
    svg = figure[1]!;
  }, 60000);

  afterAll(async () => {
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is SVG markup vega drew on the server, with no script", () => {
    expect(svg).toMatch(/^<svg [^>]*class="marks"/);
    expect(html).not.toMatch(/<script/i);
  });

  it("has one point per scored trial, each labelled with its trial, kind and score", () => {
    const points = symbols(group(svg, "trials_marks"));
    const scored = TRIALS.filter(([, , score]) => score !== null);
    expect(points).toHaveLength(scored.length);
    expect(points.map((p) => p.label).sort()).toEqual(
      scored.map(([index, kind, score]) => `trial ${index} (${kind}): ${score!.toFixed(3)}`).sort(),
    );
  });

  it("places each point at its trial and score: x and y linear in them, higher scores higher up", () => {
    const points = symbols(group(svg, "trials_marks"));
    const at = new Map(points.map((p) => [Number(/^trial (\d+) /.exec(p.label)![1]), p]));
    const scored = TRIALS.filter(([, , score]) => score !== null) as [number, string, number][];
    // Two reference points (the lowest and highest score), then every point on the lines through them.
    const [lo, hi] = [scored.reduce((a, b) => (b[2] < a[2] ? b : a)), scored.reduce((a, b) => (b[2] > a[2] ? b : a))];
    const pLo = at.get(lo[0])!, pHi = at.get(hi[0])!;
    expect(pHi.y).toBeLessThan(pLo.y);
    const yPerScore = (pHi.y - pLo.y) / (hi[2] - lo[2]);
    const xPerTrial = (pHi.x - pLo.x) / (hi[0] - lo[0]);
    expect(xPerTrial).toBeGreaterThan(0);
    for (const [index, , score] of scored) {
      const p = at.get(index)!;
      expect(p.y).toBeCloseTo(pLo.y + (score - lo[2]) * yPerScore, 0);
      expect(p.x).toBeCloseTo(pLo.x + (index - lo[0]) * xPerTrial, 0);
    }
  });

  it("keeps every point and the ring whole inside the plot: the edge trials and scores are not cut by the axes", () => {
    // A symbol of area s (vega's size) has radius sqrt(s / pi); its translate is its centre in the plot's frame.
    const inside = (p: { x: number; y: number }, size: number) => {
      const r = Math.sqrt(size / Math.PI);
      return p.x - r >= 0 && p.x + r <= CHART_WIDTH && p.y - r >= 0 && p.y + r <= CHART_HEIGHT;
    };
    const points = symbols(group(svg, "trials_marks"));
    expect(points.length).toBe(4);
    expect(points.filter((p) => !inside(p, 60)).map((p) => p.label)).toEqual([]);
    const rings = [...svg.matchAll(/<path\b[^>]*aria-label="the returned trial"[^>]*>/g)].map((m) => symbols(m[0])[0]!);
    expect(rings.filter((p) => !inside(p, 260))).toEqual([]);
  });

  it("keeps points at the score axis' ends whole too (scores 0 and 1, the first and last trial)", async () => {
    const edge = [trial(0, "baseline", 0), trial(1, "candidate", 1), trial(2, "candidate", 0.5)];
    const drawn = await chartSvg(trialsChartSpec(edge, 1));
    const points = symbols(group(drawn, "trials_marks"));
    expect(points).toHaveLength(3);
    const r = Math.sqrt(260 / Math.PI);
    for (const p of points) {
      expect([p.label, p.x - r >= 0 && p.x + r <= CHART_WIDTH && p.y - r >= 0 && p.y + r <= CHART_HEIGHT]).toEqual([p.label, true]);
    }
  });

  it("rings the returned trial", () => {
    const points = symbols(group(svg, "trials_marks"));
    const returned = points.find((p) => p.label.startsWith(`trial ${RETURNED} (`))!;
    const rings = [...svg.matchAll(/<path\b[^>]*aria-label="the returned trial"[^>]*>/g)].map((m) => symbols(m[0])[0]!);
    expect(rings).toHaveLength(1);
    expect(rings[0]!.x).toBeCloseTo(returned.x, 1);
    expect(rings[0]!.y).toBeCloseTo(returned.y, 1);
  });

  it("shows stored hostile text (trial kinds, the run's name) only escaped: no element made of it", () => {
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<svg onload/i);
    expect(html.match(/<svg\b/g)).toHaveLength(1);
    // No attribute named on...: the tags with their quoted values left out (a value holds no '"'
    // unescaped, so this cannot cut one short).
    const tags = [...html.matchAll(/<[a-z][^>]*>/gi)].map((m) => m[0].replace(/"[^"]*"/g, '""'));
    expect(tags.filter((tag) => /\son[a-z]+\s*=/i.test(tag))).toEqual([]);
    expect(tags.length).toBeGreaterThan(100);
    // The kinds are in the chart's legend as text.
    expect(group(svg, "role-legend")).toContain("&lt;img src=x onerror");
    expect(html).toContain(`GEPA &lt;img src=x onerror=alert(1)&gt;`);
  });
});
