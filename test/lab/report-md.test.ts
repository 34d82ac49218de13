import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { renderReport } from "../../lib/lab/report/report-md.js";
import type { ModelChoice } from "../../lib/lab/experiment/model-choice.js";
import type { ReproduceResults } from "../../lib/lab/experiment/reproduce.js";

describe("report.md", () => {
  it("writes model and dataset text as text: HTML in an instruction or a demo is escaped, pipes and newlines kept out of table cells", () => {
    const results = JSON.parse(readFileSync("reports/poem-sentiment/results.json", "utf8")) as ReproduceResults;
    results.program.self!.instruction = "Classify <script>alert(1)</script> the verse & say why.\nThen <b>stop</b>.";
    results.program.self!.demos = [{ id: "train-1", input: { verse: "a <i>dark</i> | night\nfalls" }, output: { label: "negative" } }];
    const model = { id: "openai/gpt-4o-mini", source: "--lm", standIn: false, description: "openai/gpt-4o-mini (from --lm, temperature 0)" } as ModelChoice;
    const md = renderReport({
      results, summary: "Sentiment of a verse (4 labels): a Predict program before and after MIPROv2 chose its instruction and demos.", models: [model], registered: true, bundledDataset: true, charts: { files: [], problems: [] }, providerCalls: 0,
      cost: { baseline: 0, optimized: 0, optimizer: 0 },
    });
    expect(md).not.toMatch(/<script|<b>|<i>/);
    expect(md).toContain("> Classify &lt;script&gt;alert(1)&lt;/script&gt; the verse &amp; say why.\n> Then &lt;b&gt;stop&lt;/b&gt;.");
    expect(md).toContain("| train-1 | verse: a &lt;i&gt;dark&lt;/i&gt; \\| night falls | label: negative |");
  });
});
