// typelm run's optimizer maximizes the experiment's first metric, scored per example as the
// evaluation scores a row; the optimization run's config.metric is that metric's name.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
import { closeStoreSync } from "../../lib/store/db.js";
import type { OptimizationRun } from "../../lib/store/records.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { offline, runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "typelm-optimizer-metric-"));
const stores: string[] = [];
afterAll(() => {
  for (const path of stores) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Each question's expected answer, the model's reply (whatever the prompt's instruction and demos),
 * and that reply's token F1 worked out by hand: precision = shared tokens / reply tokens, recall =
 * shared tokens / expected tokens, F1 = 2PR / (P + R).
 */
const QUESTIONS: { id: string; split: "train" | "dev" | "test"; gold: string; reply: string; f1: number }[] = [
  { id: "t1", split: "train", gold: "green", reply: "green", f1: 1 },
  { id: "t2", split: "train", gold: "seven", reply: "eight", f1: 0 },
  { id: "t3", split: "train", gold: "left hand", reply: "left", f1: 2 / 3 },
  { id: "t4", split: "train", gold: "winter", reply: "winter", f1: 1 },
  { id: "d1", split: "dev", gold: "alpha beta gamma delta", reply: "alpha", f1: 0.4 }, // P 1, R 1/4
  { id: "d2", split: "dev", gold: "blue", reply: "blue sky", f1: 2 / 3 }, // P 1/2, R 1
  { id: "d3", split: "dev", gold: "north south", reply: "south north east", f1: 0.8 }, // P 2/3, R 1
  { id: "d4", split: "dev", gold: "cat", reply: "dog", f1: 0 },
  { id: "d5", split: "dev", gold: "red fox", reply: "red fox", f1: 1 },
  { id: "s1", split: "test", gold: "one two three", reply: "two three four", f1: 2 / 3 }, // P 2/3, R 2/3
  { id: "s2", split: "test", gold: "paris", reply: "paris", f1: 1 },
];
const F1 = new Map(QUESTIONS.map((q) => [q.id, q.f1]));

const EXPERIMENT = `import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";

const Answer = Signature.define({
  name: "Answer",
  description: "Answer the question in a few words.",
  input: { question: z.string() },
  output: { answer: z.string() },
});
const questions = ${JSON.stringify(QUESTIONS.map(({ id, split, gold }) => ({ id, split, gold })))};
const split = (name) => questions.filter((q) => q.split === name).map((q) => ({ id: q.id, input: { question: "question " + q.id }, output: { answer: q.gold } }));

export default defineExperiment({
  name: "answers",
  dataset: { train: split("train"), dev: split("dev"), test: split("test") },
  signature: Answer,
  program: ({ signature }) => new Predict(signature),
  metrics: ["token_f1", "accuracy"],
  optimizer: "simple",
  optimizerOptions: { numTrials: 2, kDemos: 1 },
});
`;

/** The reply for the question the prompt ends with (demos, when present, come before it). */
function reply(request: FakeRequest): Record<string, unknown> {
  const text = String(request.messages[request.messages.length - 1]?.content ?? "");
  const id = [...text.matchAll(/question (\w+)/g)].pop()?.[1];
  return { answer: QUESTIONS.find((q) => q.id === id)?.reply ?? "unknown" };
}

describe("typelm run's optimizer and the experiment's first metric", () => {
  let fake: FakeProvider;
  let cwd: string;
  let result: { code: number; stdout: string; stderr: string };

  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: reply });
    cwd = join(dir, "answers");
    mkdirSync(join(cwd, "node_modules"), { recursive: true });
    symlinkSync(root, join(cwd, "node_modules", "typelm"), "dir");
    symlinkSync(join(root, "node_modules", "zod"), join(cwd, "node_modules", "zod"), "dir");
    mkdirSync(join(cwd, "experiments"));
    writeFileSync(join(cwd, "experiments/answers.ts"), EXPERIMENT);
    const env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-metric" };
    result = await runBuiltCli(["run", "experiments/answers.ts", "--lm", "openai/model-a"], cwd, env);
  }, 120000);
  afterAll(() => fake.close());

  it("token_f1 first: every trial scores each example by its token F1, and config.metric is token_f1", () => {
    expect(result.stderr).not.toMatch(/^typelm run:/m);
    expect(result.code).toBe(0);
    const path = join(cwd, ".typelm/lab.sqlite");
    stores.push(path);
    const lab = LabStore.open(path);
    const [summary, ...others] = lab.runs({ kind: "optimization" });
    expect(others).toHaveLength(0);
    const run = lab.run(summary!.id) as OptimizationRun;
    expect(run.config.metric).toBe("token_f1");
    const scored = run.trials.filter((t) => t.exampleScores !== null && t.exampleScores.length > 0);
    // The baseline and the two random configurations, each on the five dev examples.
    expect(scored.length).toBeGreaterThanOrEqual(3);
    for (const trial of scored) {
      expect(trial.exampleScores!.map((s) => s.exampleId).sort()).toEqual(["d1", "d2", "d3", "d4", "d5"]);
      for (const s of trial.exampleScores!) {
        expect(s.error).toBeNull();
        expect(s.score).toBeCloseTo(F1.get(s.exampleId)!, 10);
      }
      // (0.4 + 2/3 + 0.8 + 0 + 1) / 5; strict equality of every field would give 1/5.
      expect(trial.score).toBeCloseTo((0.4 + 2 / 3 + 0.8 + 0 + 1) / 5, 10);
    }
    // The report's token_f1 of the test split is the same per-example score, averaged.
    const results = JSON.parse(readFileSync(join(cwd, "reports/answers/results.json"), "utf8"));
    expect(results.baseline.metrics.token_f1).toBeCloseTo((2 / 3 + 1) / 2, 10);
    expect(results.baseline.metrics.accuracy).toBeCloseTo(1 / 2, 10);
  });
});
