// An evaluation whose model reads part of each prompt from the provider's cache (the Anthropic wire
// of the fake provider, through the real SDK): the report and `typelm show` give the cache-read
// share and what the cache saved, worked out by hand from the price list.
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, Predict, Signature } from "../../lib/index.js";
import { closeStoreSync } from "../../lib/store/db.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { runCliHere } from "../helpers/cli.js";
import { lmFor, withFakeProvider } from "../lm/helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
const dir = mkdtempSync(join(tmpdir(), "typelm-prompt-cache-"));
const path = join(dir, ".typelm/lab.sqlite");
afterAll(() => {
  closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

describe("prompt cache in the report and typelm show", () => {
  it("gives the cache-read share of the input and the saving", async () => {
    // Each call: 1000 prompt tokens, 600 read from the cache and 100 written to it; 20 output tokens.
    for (let n = 0; n < 3; n++) fake.reply({ sentiment: "positive" }, { usage: { inputTokens: 1000, outputTokens: 20, cacheReadTokens: 600, cacheWriteTokens: 100 } });
    const examples = [0, 1, 2].map((n) => new FewShotExample({ input: { sentence: `sentence ${n}` }, output: { sentiment: "positive" }, id: `ex-${n}` }));
    const program = new Predict(Classify).configure((c) => { c.lm = lmFor("anthropic", fake, { promptCache: true }); });
    const report = await new Evaluation({ lab: LabStore.open(path), name: "cached", progress: false })
      .evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    expect(fake.requests).toHaveLength(3);
    expect(report.inputTokens).toBe(3000);
    // claude-3-5-haiku: input 0.8, cache read 0.08 USD per million: 3 x 600 x 0.72 / 1e6 saved.
    const saved = (3 * 600 * (0.8 - 0.08)) / 1e6;
    expect(report.promptCache).toEqual({ readTokens: 1800, writeTokens: 300, reasoningTokens: 0, savings: expect.closeTo(saved, 12) });
    const shown = await runCliHere(["show", report.runId!], dir);
    expect(shown.stderr).toBe("");
    expect(shown.stdout).toContain("prompt cache: 60.0% of input tokens read from the cache (1800 of 3000), 300 written; saved $0.0013");
  });
});
