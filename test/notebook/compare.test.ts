import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature, ValidationError, compare } from "../../lib/index.js";
import { display } from "../../lib/notebook/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { countColour, decodePng } from "./png.js";
import { row } from "./fixtures.js";

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["positive", "negative"]) },
});

const gold = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? "positive" : "negative"));
const examples = gold.map((g, i) => new FewShotExample({ id: `test-${i}`, input: { sentence: `s${i} <i>verse</i>` }, output: { sentiment: g } }));

/** An evaluation whose model answers example i with `answer(i)`. */
async function evaluate(name: string, answer: (i: number) => string) {
  const lm = new ScriptedLM(({ inputs }) => ({ sentiment: answer(Number(/^s(\d+)/.exec(String(inputs?.sentence))![1])) }));
  const program = new Predict(Classify).configure((c) => { c.lm = lm; });
  return new Evaluation({ name, record: false, progress: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy", "f1_score"] });
}

describe("display.metrics with report.ci", () => {
  it("draws each metric's 95% interval as an errorbar layer whose low/high are the report's ci", async () => {
    const baseline = await evaluate("baseline", () => "positive");
    const optimized = await evaluate("optimized", (i) => (i < 24 ? gold[i]! : "positive"));
    const bundle = (await display.metrics([baseline, optimized]))!;
    const spec = bundle["application/vnd.vegalite.v5+json"]!;
    const layers = spec.layer as { mark: { type: string }; encoding?: Record<string, { field?: string }> }[];
    const errorbar = layers.find((l) => l.mark.type === "errorbar");
    expect(errorbar).toBeDefined();
    expect(errorbar!.encoding!.y!.field).toBe("low");
    expect(errorbar!.encoding!.y2!.field).toBe("high");
    const values = (spec.data as { values: { run: string; metric: string; value: number; low: number; high: number }[] }).values;
    expect(values).toHaveLength(4);
    for (const v of values) {
      const report = v.run === "baseline" ? baseline : optimized;
      expect([v.low, v.high]).toEqual(report.ci[v.metric]);
      expect(v.low).toBeLessThanOrEqual(v.value);
      expect(v.high).toBeGreaterThanOrEqual(v.value);
    }
    // The error bars are drawn (dark grey), and the table gives the intervals.
    const image = decodePng(Buffer.from(bundle["image/png"]!, "base64"));
    expect(countColour(image, "#333333", 20)).toBeGreaterThan(100);
    const [low, high] = optimized.ci.accuracy!;
    expect(bundle["text/plain"]).toContain(`${Number(optimized.accuracy.toFixed(4))} (${Number(low.toFixed(4))}–${Number(high.toFixed(4))})`);
    expect(bundle["text/plain"]).toContain("95% intervals: accuracy wilson; f1_score bootstrap-bca");
  });

  it("draws no errorbar layer for a run without ci (a lab store run)", async () => {
    const bundle = (await display.metrics({ name: "lab run", rows: [row(0, "a", "a"), row(1, "a", "b")] }))!;
    const layers = bundle["application/vnd.vegalite.v5+json"]!.layer as { mark: { type: string } }[];
    expect(layers.map((l) => l.mark.type)).toEqual(["bar", "text"]);
  });
});

describe("display.compare", () => {
  it("shows the difference with its interval and p-value, and the changed examples side by side, escaped", async () => {
    const baseline = await evaluate("baseline", () => "positive");
    // Right on the 12 negatives among the first 24, wrong on 2 positives it had right: 14 discordant pairs, 12 to 2.
    const optimized = await evaluate("optimized <b>v2</b>", (i) => (i < 4 ? "negative" : i < 24 ? gold[i]! : "positive"));
    const c = compare(baseline, optimized);
    expect([c.better.length, c.worse.length]).toEqual([12, 2]);
    const bundle = (await display.compare(baseline, optimized))!;
    expect(Object.keys(bundle).sort()).toEqual(["text/html", "text/plain"]);
    const text = bundle["text/plain"];
    expect(text).toContain(`accuracy: baseline 0.5 → optimized <b>v2</b> ${Number(optimized.accuracy.toFixed(4))}`);
    // p = 2·(C(14,0) + C(14,1) + C(14,2))/2^14 = 2·(1 + 14 + 91)/16384 = 0.01294
    expect(text).toContain(`difference +0.333 (95% CI +${c.ci[0].toFixed(3)} to +${c.ci[1].toFixed(3)}, clopper-pearson), p = 0.013, mcnemar-exact: significant at the 5% level`);
    expect(text).toContain("30 examples paired by id: 12 better, 2 worse, 16 unchanged");
    expect(text).toMatch(/test-1\s+better\s+sentence: s1 <i>verse<\/i>\s+sentiment: negative\s+sentiment: positive\s+sentiment: negative\s+0 → 1/);
    expect(text).toMatch(/test-2\s+worse\s+sentence: s2 <i>verse<\/i>\s+sentiment: positive\s+sentiment: positive\s+sentiment: negative\s+1 → 0/);
    const html = bundle["text/html"];
    expect(html).not.toMatch(/<i>|<b>/);
    expect(html).toContain("s1 &lt;i&gt;verse&lt;/i&gt;");
    expect(html).toContain("prediction optimized &lt;b&gt;v2&lt;/b&gt;");
    expect(html).toContain("significant at the 5% level");
    expect(html.match(/<tr>/g)).toHaveLength(14 + 1); // header + 14 changed examples
  });

  it('says "not significant" in words when it is not, and lists only the changed examples (limit)', async () => {
    const baseline = await evaluate("baseline", () => "positive");
    const optimized = await evaluate("optimized", (i) => (i === 1 || i === 3 ? "negative" : "positive"));
    const bundle = (await display.compare(baseline, optimized, { labels: ["before", "after"], limit: 1 }))!;
    // Two changed examples: the exact test can never reject, so there is no detectable difference to name.
    expect(bundle["text/plain"]).toContain("p = 0.5, mcnemar-exact: not significant at the 5% level; mde: none (too few changed examples for 80% power)");
    expect(bundle["text/html"]).toContain("not significant at the 5% level");
    expect(bundle["text/plain"]).toContain("1 more changed example not shown (limit 1)");
    expect(bundle["text/plain"]).toContain("prediction before");
  });

  it("compares on another metric and confidence, and takes lab store runs (rows)", async () => {
    const a = { name: "a", rows: [row(0, "x", "x"), row(1, "x", "y"), row(2, "y", "y")] };
    const b = { name: "b", rows: [row(0, "x", "y"), row(1, "x", "x"), row(2, "y", "y")] };
    const bundle = (await display.compare(a, b, { metric: "accuracy", confidence: 0.9 }))!;
    expect(bundle["text/plain"]).toContain("difference 0.000 (90% CI");
    expect(bundle["text/plain"]).toContain("not significant at the 10% level");
  });

  it("a ValidationError for what is not a report, mismatched examples or an unknown metric", async () => {
    const a = { name: "a", results: [row(0, "x", "x")], metrics: { accuracy: 1 } };
    await expect(display.compare(undefined as never, a)).rejects.toThrow(ValidationError);
    await expect(display.compare(a, null as never)).rejects.toThrow("display.compare expects an Evaluation report");
    await expect(display.compare(a, { results: [row(5, "x", "x")], metrics: { accuracy: 1 } })).rejects.toThrow('example "test-0" is in the first report but not in the second');
    await expect(display.compare(a, a, { metric: "token_f1" })).rejects.toThrow(ValidationError);
  });
});
