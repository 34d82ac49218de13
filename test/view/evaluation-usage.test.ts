// The evaluation page's "Model use" section: when the run read part of its prompts from the
// provider's cache (`summary.promptCache`), it says the cache-read share of the input tokens and
// what the cache saved, as `typelm show` does; a run without a prompt cache gets no such line.
import { describe, expect, it } from "@jest/globals";
import type { RunSummary } from "../../lib/store/records.js";
import { usageSection } from "../../lib/view/evaluation-usage.js";

const run = (summary: Record<string, unknown>): RunSummary => ({
  id: "run-1", kind: "evaluation", name: "cached", status: "completed", startedAt: "2026-11-28T00:00:00Z", endedAt: "2026-11-28T00:01:00Z",
  score: 1, config: {}, summary, error: null,
});

describe("the evaluation page's prompt-cache line", () => {
  it("gives the cache-read share, the tokens written and the saving beside the cost", () => {
    // 1800 of 3000 input tokens read from the cache = 60.0%; 300 written; $0.001296 saved.
    const text = usageSection(run({
      inputTokens: 3000, outputTokens: 60, cost: 0.0021,
      promptCache: { readTokens: 1800, writeTokens: 300, reasoningTokens: 0, savings: 0.001296 },
    })).text;
    expect(text).toContain('<p id="prompt-cache">prompt cache: 60.0% of input tokens read from the cache (1800 of 3000), 300 written; saved $0.0013</p>');
    expect(text).toContain('<tr data-usage="program">');
    expect(text).toContain("0.0021");
  });

  it("says nothing of a prompt cache when the run used none, or its record is malformed", () => {
    expect(usageSection(run({ inputTokens: 3000, outputTokens: 60, cost: 0.0021 })).text).not.toContain("prompt-cache");
    expect(usageSection(run({ inputTokens: 3000, outputTokens: 60, cost: 0.0021, promptCache: { readTokens: "x" } })).text).not.toContain("prompt-cache");
  });
});
