// A judge in an evaluation sent through the provider's batch service, against the fake provider on loopback.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Evaluation, FewShotExample, Judge, LabStore, LM, Predict, rescore, resetConfiguration } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { Upper, answerFor } from "../evaluate/batch-task.js";

afterEach(() => resetConfiguration());

const words = ["ant", "bee", "yak", "dog"];
const examples = words.map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase() } }));

/** The program shouts the word; the judge (its prompt holds the judged "answer") fails "YAK" and passes the rest. */
function answer(request: FakeRequest): Record<string, unknown> {
  const last = String(request.messages[request.messages.length - 1]?.content ?? "");
  if (last.includes('"answer"')) return { rationale: "checked", verdict: last.includes("YAK") ? "fail" : "pass" };
  return answerFor(last);
}

let fake: FakeProvider;
beforeAll(async () => { fake = await startFakeProvider({ defaultReply: answer }); });
afterAll(() => fake.close());

const lm = (cache?: string) => new LM("openai/gpt-4o-mini", {
  apiKey: "sk-judge-batch-key", baseURL: fake.openaiBaseURL, temperature: 0, ...(cache === undefined ? {} : { cache: { path: cache } }),
});
const dir = mkdtempSync(join(tmpdir(), "typelm-judge-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a Judge with batch: true", () => {
  it("sends the judge's calls as a batch of their own after the program's, with no live request, and counts them apart", async () => {
    const before = { batches: fake.batches.length, live: fake.requests.length };
    const judge = new Judge({ name: "loud", criteria: "The word is shouted.", lm: lm() });
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const report = await new Evaluation({ lab: null, batch: { pollInterval: 0.01 }, progress: false })
      .evaluate({ moduleInstance: program, testExamples: examples, metrics: [judge] });

    expect(fake.requests.length).toBe(before.live);
    const batches = fake.batches.slice(before.batches);
    expect(batches.map((b) => b.customIds.length)).toEqual([4, 4]);
    expect(batches[1]!.requests.every((r) => JSON.stringify(r.messages).includes("Judge the answer"))).toBe(true);
    expect(report.failures).toEqual([]);
    expect(report.results.map((r) => r.scores["loud"])).toEqual([1, 1, 0, 1]);
    expect(report.judge.calls).toBe(4);
    expect(report.judge.inputTokens).toBeGreaterThan(0);
    expect(report.judge.cost).toBeGreaterThan(0);
    // The program's own totals hold only its calls: the same as an evaluation without the judge.
    const plain = await new Evaluation({ lab: null, batch: { pollInterval: 0.01 }, progress: false })
      .evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: examples });
    expect(plain.inputTokens).toBeGreaterThan(0);
    expect(report.inputTokens).toBe(plain.inputTokens);
    expect(report.cost).toBeCloseTo(plain.cost, 12);
  });

  it("answers a judge call from the response cache the second time: no request reaches the provider, and it costs nothing", async () => {
    const cache = join(dir, "cache.sqlite");
    const evaluate = () => new Evaluation({ lab: null, progress: false }).evaluate({
      moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(cache); }), testExamples: examples,
      metrics: [new Judge({ name: "loud", criteria: "The word is shouted.", lm: lm(cache) })],
    });
    const before = fake.requests.length;
    const first = await evaluate();
    expect(fake.requests.length - before).toBe(8);
    const second = await evaluate();
    expect(fake.requests.length - before).toBe(8);
    expect(second.results.map((r) => r.scores["loud"])).toEqual(first.results.map((r) => r.scores["loud"]));
    expect(first.judge.cost).toBeGreaterThan(0);
    expect(second.judge).toMatchObject({ calls: 4, cost: 0 });
  });

  it("rescores a stored run with the judge's calls sent as one batch", async () => {
    const lab = LabStore.open(join(dir, "rescore.sqlite"));
    const source = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: examples });
    const before = { batches: fake.batches.length, live: fake.requests.length };
    const judge = new Judge({ name: "loud", criteria: "The word is shouted.", lm: lm() });
    const again = await rescore(source.runId!, { metrics: [judge], lab, batch: { pollInterval: 0.01 }, progress: false });
    // One live request: the judge's check before the run (its model answers); the four judgements go as one batch.
    expect(fake.requests.length).toBe(before.live + 1);
    expect(fake.batches.slice(before.batches).map((b) => b.customIds.length)).toEqual([4]);
    expect(again.results.map((r) => r.scores["loud"])).toEqual([1, 1, 0, 1]);
    expect(again.judge.calls).toBe(4);
  });
});
