import { describe, expect, it } from "@jest/globals";
import * as vegaLite from "vega-lite";
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { display, confusionMatrix, type MimeBundle } from "../../lib/notebook/index.js";
import { countColour, decodePng, distinctColours, PNG_SIGNATURE } from "./png.js";
import { row, trial } from "./fixtures.js";

// vega's default category colours: the first two series of a chart.
const BLUE = "#4c78a8";
const ORANGE = "#f58518";

function png(bundle: MimeBundle) {
  const bytes = Buffer.from(bundle["image/png"]!, "base64");
  expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
  return { bytes, image: decodePng(bytes) };
}

/** The <img> in the HTML: the same PNG, at half its pixel size (it is drawn at 2x). */
function htmlImage(bundle: MimeBundle): { src: string; width: number; height: number } {
  const m = /<img src="data:image\/png;base64,([^"]+)" width="(\d+)" height="(\d+)"/.exec(bundle["text/html"]);
  expect(m).not.toBeNull();
  return { src: m![1]!, width: Number(m![2]), height: Number(m![3]) };
}

function expectChartBundle(bundle: MimeBundle): void {
  expect(Object.keys(bundle).sort()).toEqual(["application/vnd.vegalite.v5+json", "image/png", "text/html", "text/plain"]);
  const spec = bundle["application/vnd.vegalite.v5+json"]!;
  expect(spec.$schema).toBe("https://vega.github.io/schema/vega-lite/v5.json");
  const compiled = vegaLite.compile(spec as never).spec;
  expect(compiled.marks?.length ?? 0).toBeGreaterThan(0);
  const img = htmlImage(bundle);
  expect(img.src).toBe(bundle["image/png"]);
  const { image } = png(bundle);
  expect(image.width).toBe(img.width * 2);
  expect(image.height).toBe(img.height * 2);
  expect(image.width).toBeGreaterThan(300);
  expect(image.height).toBeGreaterThan(200);
}

const baseline = { name: "baseline", results: [row(0, "positive", "positive"), row(1, "negative", "positive"), row(2, "neutral", "neutral"), row(3, "negative", null)], accuracy: 0.5, f1_score: 0.4 };
const optimized = { name: "optimized", results: [row(0, "positive", "positive"), row(1, "negative", "negative"), row(2, "neutral", "neutral"), row(3, "negative", "negative")], accuracy: 1, f1_score: 1 };

describe("display.metrics", () => {
  it("draws accuracy and F1 of two runs side by side, as vega-lite and as a PNG that is not blank", async () => {
    const bundle = (await display.metrics([baseline, optimized]))!;
    expectChartBundle(bundle);
    const values = (bundle["application/vnd.vegalite.v5+json"]!.data as { values: unknown[] }).values;
    expect(values).toEqual([
      { run: "baseline", metric: "accuracy", value: 0.5 },
      { run: "baseline", metric: "f1_score", value: 0.4 },
      { run: "optimized", metric: "accuracy", value: 1 },
      { run: "optimized", metric: "f1_score", value: 1 },
    ]);
    const { image } = png(bundle);
    // Both runs' bars are drawn in their series colours; a blank or single-series image fails here.
    expect(countColour(image, BLUE)).toBeGreaterThan(2000);
    expect(countColour(image, ORANGE)).toBeGreaterThan(2000);
    expect(distinctColours(image)).toBeGreaterThan(8);
    expect(bundle["text/plain"]).toContain("baseline   0.5       0.4       4         1");
  });

  it("averages a metric over the rows when the report has no number for it", async () => {
    const bundle = (await display.metrics({ name: "lab run", rows: [row(0, "a", "a"), row(1, "a", "b"), row(2, "b", "b"), row(3, "b", "b")] }))!;
    const values = (bundle["application/vnd.vegalite.v5+json"]!.data as { values: unknown[] }).values;
    expect(values).toEqual([{ run: "lab run", metric: "accuracy", value: 0.75 }]);
  });

  it("keeps two runs with the same name apart", async () => {
    const bundle = (await display.metrics([{ ...baseline, name: "eval" }, { ...optimized, name: "eval" }]))!;
    const values = (bundle["application/vnd.vegalite.v5+json"]!.data as { values: { run: string }[] }).values;
    expect([...new Set(values.map((v) => v.run))]).toEqual(["eval", "eval (2)"]);
  });

  it("refuses to draw an empty chart: no reports, or a run with no rows and no metric values yet", async () => {
    await expect(display.metrics([])).rejects.toThrow("display.metrics: nothing to draw: no reports were given");
    await expect(display.metrics({ name: "just started", rows: [] })).rejects.toThrow(
      'display.metrics: nothing to draw: "just started" has no metric values and no rows',
    );
  });

  it("escapes run names in the HTML", async () => {
    const bundle = (await display.metrics({ ...optimized, name: "<script>alert(1)</script>" }))!;
    expect(bundle["text/html"]).not.toContain("<script>");
    expect(bundle["text/html"]).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});

describe("display.confusion", () => {
  it("counts expected against predicted labels, a failed example in its own column", () => {
    const m = confusionMatrix(baseline);
    expect(m.field).toBe("sentiment");
    expect(m.expected).toEqual(["negative", "neutral", "positive"]);
    expect(m.labels).toEqual(["negative", "neutral", "positive", "(failed)"]);
    expect(m.counts).toEqual([
      [0, 0, 1, 1],
      [0, 1, 0, 0],
      [0, 0, 1, 0],
    ]);
  });

  it("draws the matrix as a heatmap PNG with filled cells", async () => {
    const bundle = (await display.confusion(optimized, "sentiment"))!;
    expectChartBundle(bundle);
    const { image } = png(bundle);
    // The darkest cells use the end of the "blues" scheme; an empty heatmap has none.
    expect(countColour(image, "#08519c", 40)).toBeGreaterThan(1000);
    expect(distinctColours(image)).toBeGreaterThan(8);
    expect(bundle["text/plain"]).toContain("4 of 4 on the diagonal");
  });

  it("names the fields it saw when none holds labels", async () => {
    const numeric = { results: [{ ...row(0, "x", "x"), expected: { answer: 4 } }] };
    await expect(display.confusion(numeric)).rejects.toThrow(/fields seen: answer/);
  });
});

describe("display.candidates", () => {
  const run = {
    name: "MIPROv2",
    bestTrial: 3,
    trials: [
      trial(0, "baseline", 0.4),
      trial(1, "bootstrap", 0.95),
      trial(1.5, "minibatch", 0.9),
      trial(2, "minibatch", 0.3),
      trial(3, "full", 0.7, { instructions: { self: "Answer <b>briefly</b> & well" } }),
      trial(4, "full", 0.6),
      trial(5, "full", null, { error: "LMError: <timeout>" }),
    ],
  };

  it("plots each trial and the best full score so far, ignoring minibatch and bootstrap scores", async () => {
    const bundle = (await display.candidates(run))!;
    expectChartBundle(bundle);
    const layers = bundle["application/vnd.vegalite.v5+json"]!.layer as { data: { values: { trial: number; best: number | null }[] } }[];
    const points = layers[1]!.data.values;
    expect(points.map((p) => [p.trial, p.best])).toEqual([[0, 0.4], [1, 0.4], [1.5, 0.4], [2, 0.4], [3, 0.7], [4, 0.7]]);
    const { image } = png(bundle);
    expect(distinctColours(image)).toBeGreaterThan(8);
    expect(countColour(image, "#2ca02c", 20)).toBeGreaterThan(200); // the best-so-far line
  });

  it("lists instructions and demo sets in a table, escaped, with failed trials marked", async () => {
    const bundle = (await display.candidates(run))!;
    const html = bundle["text/html"];
    expect(html).toContain("self: Answer &lt;b&gt;briefly&lt;/b&gt; &amp; well");
    expect(html).not.toContain("<b>briefly");
    expect(html).toContain("self: train-4");
    expect(html).toContain("failed: LMError: &lt;timeout&gt;");
    expect(bundle["text/plain"]).toContain("7 trials, best score 0.7, validation (chosen on it)");
  });

  it("draws a GEPA run's candidates as a tree of generations", async () => {
    const gepa = {
      name: "GEPA",
      trials: [trial(0, "candidate", 0.3), trial(1, "candidate", 0.5, { parents: [0] }), trial(2, "candidate", 0.4, { parents: [0] }), trial(3, "candidate", 0.8, { parents: [1, 2] })],
    };
    const bundle = (await display.candidates(gepa))!;
    expectChartBundle(bundle);
    const spec = bundle["application/vnd.vegalite.v5+json"]!;
    const tree = (spec.vconcat as { layer: { data: { values: Record<string, number>[] } }[] }[])[1]!;
    const nodes = tree.layer[1]!.data.values.map((n) => [n.trial, n.generation, n.row]);
    expect(nodes).toEqual([[0, 0, 0], [1, 1, 0], [2, 1, 1], [3, 2, 0]]);
    expect(tree.layer[0]!.data.values).toHaveLength(4); // 0→1, 0→2, 1→3, 2→3
  });
});

describe("with a real Evaluation report", () => {
  const Classify = Signature.define({
    name: "Classify",
    description: "Classify the sentiment.",
    input: { sentence: z.string() },
    output: { sentiment: z.enum(["positive", "negative", "neutral"]) },
  });
  const gold = ["positive", "negative", "negative", "neutral", "positive"] as const;
  // The model answers "positive" except for sentence 3 (a bad reply: the example fails).
  const lm = new ScriptedLM(({ inputs }) => (inputs?.sentence === "s3" ? "not json at all" : { sentiment: "positive" }));
  const examples = gold.map((g, i) => new FewShotExample({ id: `test-${i}`, input: { sentence: `s${i}` }, output: { sentiment: g } }));

  it("charts the report's own accuracy and macro-F1, and its confusion matrix with the failed example", async () => {
    const program = new Predict(Classify);
    program.configure((c) => { c.lm = lm; });
    const report = await new Evaluation({ record: false, progress: false, concurrency: 1 }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy", "f1_score"] });
    const bundle = (await display.metrics(report, { labels: ["always positive"] }))!;
    const values = (bundle["application/vnd.vegalite.v5+json"]!.data as { values: { metric: string; value: number }[] }).values;
    // accuracy 2/5; macro-F1 over the declared labels: positive P=2/4 R=2/2 F1=2/3, negative 0, neutral 0 → (2/3)/3.
    expect(values.map((v) => [v.metric, Number(v.value.toFixed(4))])).toEqual([["accuracy", 0.4], ["f1_score", 0.2222]]);
    const m = confusionMatrix(report);
    expect(m.labels).toEqual(["positive", "negative", "neutral", "(failed)"]);
    expect(m.counts).toEqual([
      [2, 0, 0, 0],
      [2, 0, 0, 0],
      [0, 0, 0, 1],
    ]);
    expectChartBundle((await display.confusion(report))!);
  });

  it("labels each run with the name its Evaluation was given, and numbers unnamed ones", async () => {
    const program = new Predict(Classify);
    program.configure((c) => { c.lm = lm; });
    const run = (name?: string) =>
      new Evaluation({ record: false, progress: false, ...(name === undefined ? {} : { name }) })
        .evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    const reports = [await run("baseline"), await run("tuned"), await run()];
    expect(reports.map((r) => r.name)).toEqual(["baseline", "tuned", undefined]);
    const bundle = (await display.metrics(reports))!;
    const runs = (bundle["application/vnd.vegalite.v5+json"]!.data as { values: { run: string }[] }).values.map((v) => v.run);
    expect(runs).toEqual(["baseline", "tuned", "run 3"]);
  });
});
