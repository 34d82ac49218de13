// Evaluation's batch.maxRequestsPerBatch, which no other Evaluation test sets: the requests of one
// round are split into batches of at most that many (the fake provider's batch service on loopback).
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Evaluation, FewShotExample, LM, Predict } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { Upper, answerFor } from "./batch-task.js";

const words = ["ant", "bee", "yak", "dog", "eel", "fox", "gnu"];
const examples = words.map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase() } }));

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider({ defaultReply: (r: FakeRequest) => answerFor(String(r.messages[r.messages.length - 1]?.content ?? "")) });
});
afterAll(() => fake.close());

const program = () => new Predict(Upper).configure((c) => {
  c.lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-batch-options-key", baseURL: fake.openaiBaseURL, temperature: 0 });
});

describe("Evaluation batch.maxRequestsPerBatch", () => {
  it("splits a round of 7 requests into batches of at most 3 (3, 3, 1); without it, one batch of 7", async () => {
    const sizes = async (batch: { pollInterval: number; maxRequestsPerBatch?: number }) => {
      const before = fake.batches.length;
      const report = await new Evaluation({ lab: null, progress: false, batch }).evaluate({ moduleInstance: program(), testExamples: examples });
      expect(report.metrics.accuracy).toBe(1);
      return fake.batches.slice(before).map((b) => b.customIds.length).sort((a, b) => b - a);
    };
    expect(await sizes({ pollInterval: 0.01, maxRequestsPerBatch: 3 })).toEqual([3, 3, 1]);
    expect(await sizes({ pollInterval: 0.01 })).toEqual([7]);
  });
});
