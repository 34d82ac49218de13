import { afterEach, beforeEach, describe, expect, it, jest } from "@jest/globals";

type Message = { data: Record<string, unknown>; metadata: unknown; transient: { display_id?: string } };

// tslab keeps its display writer in dist/jupyter.js and the helpers look for it in the CommonJS module
// cache (`createRequire(...).cache`). Jest replaces that cache with its own registry, so the test
// hands the helpers a cache it controls, holding a fake tslab module where a real kernel has one.
const FAKE_KEY = "/fake/node_modules/tslab/dist/jupyter.js";
const cache: Record<string, { exports: unknown }> = { "/x/node_modules/zod/index.js": { exports: {} } };
jest.unstable_mockModule("node:module", () => ({ createRequire: () => ({ cache }) }));
const { Instrumentation } = await import("../../lib/instrument/bus.js");
const { Prediction } = await import("../../lib/predict/prediction.js");
const { display, inNotebook, watchProgress } = await import("../../lib/notebook/index.js");
const { Evaluation, FewShotExample, Predict, Signature } = await import("../../lib/index.js");
const { ScriptedLM } = await import("../../lib/testing/index.js");
const { z } = await import("zod");

let sent: { message: Message; update: boolean }[];

function fakeKernel(): void {
  sent = [];
  cache[FAKE_KEY] = { exports: { lastWriteDisplayData: (message: Message, update: boolean) => sent.push({ message, update }) } };
}

afterEach(() => {
  delete cache[FAKE_KEY];
  Instrumentation.reset();
});

describe("outside a notebook", () => {
  it("returns the bundle instead of showing it", () => {
    expect(inNotebook()).toBe(false);
    const bundle = display.prediction(new Prediction({ sentiment: "positive" }));
    expect(bundle).toBeDefined();
    expect(Object.keys(bundle!).sort()).toEqual(["text/html", "text/plain"]);
  });
});

describe("in a tslab kernel", () => {
  beforeEach(fakeKernel);

  it("sends one display_data message holding every MIME type of a chart bundle, and returns nothing", async () => {
    const rows = [{ index: 0, exampleId: "a", inputs: {}, expected: { l: "x" }, prediction: { l: "x" }, scores: { accuracy: 1 }, error: null, durationMs: 0, inputTokens: 0, outputTokens: 0, cost: 0 }];
    const result = await display.metrics({ name: "run", results: rows });
    expect(result).toBeUndefined();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.update).toBe(false);
    expect(Object.keys(sent[0]!.message.data).sort()).toEqual(["application/vnd.vegalite.v5+json", "image/png", "text/html", "text/plain"]);
    // The vega-lite spec goes as a JSON object, not a string (a string is wrong for a JSON MIME type).
    expect(typeof sent[0]!.message.data["application/vnd.vegalite.v5+json"]).toBe("object");
  });

  it("shows a running evaluation as one display updated in place: count, running score, failures, cost", () => {
    const stop = watchProgress();
    // The payloads Evaluation emits: running totals in every example event.
    Instrumentation.emit("evaluation.start", { runId: "r1", name: "sentiment eval", total: 4, metrics: ["accuracy"] });
    Instrumentation.emit("evaluation.example", { runId: "r1", index: 0, scores: { accuracy: 1 }, error: null, done: 1, total: 4, score: 1, failures: 0, cost: 0.25 });
    Instrumentation.emit("evaluation.example", { runId: "r1", index: 1, scores: { accuracy: 0 }, error: "LMError: 500", done: 2, total: 4, score: 0.5, failures: 1, cost: 0.5 });
    Instrumentation.emit("evaluation.example", { runId: "r1", index: 2, scores: { accuracy: 1 }, error: null, done: 3, total: 4, score: 2 / 3, failures: 1, cost: 0.75 });
    Instrumentation.emit("evaluation.example", { runId: "r1", index: 3, scores: { accuracy: 1 }, error: null, done: 4, total: 4, score: 0.75, failures: 1, cost: 1 });
    Instrumentation.emit("evaluation.end", { runId: "r1", ok: true, metrics: { accuracy: 0.75 }, failures: 1, total: 4, cost: 1 });
    stop();
    const ids = new Set(sent.map((s) => s.message.transient.display_id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toEqual(expect.any(String));
    expect(sent[0]!.update).toBe(false);
    expect(sent.slice(1).every((s) => s.update)).toBe(true);
    expect(sent[0]!.message.data["text/plain"]).toBe("sentiment eval (running): 0 / 4 examples · running score — · failures 0 · cost $0.0000");
    expect(sent.at(-1)!.message.data["text/plain"]).toBe("sentiment eval (done): 4 / 4 examples · running score 0.75 · failures 1 · cost $1.0000");
  });

  it("averages per-example scores and adds per-example costs when events carry no running totals", () => {
    const stop = watchProgress();
    Instrumentation.emit("evaluation.start", { runId: "r2", name: "other", total: 2 });
    Instrumentation.emit("evaluation.example", { runId: "r2", score: 1, cost: 0.5 });
    Instrumentation.emit("evaluation.example", { runId: "r2", score: 0, cost: 0.25, error: "boom" });
    Instrumentation.emit("evaluation.end", { runId: "r2" });
    stop();
    expect(sent.at(-1)!.message.data["text/plain"]).toBe("other (done): 2 / 2 examples · running score 0.5 · failures 1 · cost $0.7500");
  });

  it("shows an optimizer's trials with the best full score so far and the LM cost spent", () => {
    const stop = watchProgress();
    Instrumentation.emit("optimizer.start", { runId: "o1", optimizer: "MIPROv2", config: { trials: 4 } });
    // An optimizer scores candidates with inner evaluations: they get no display of their own.
    Instrumentation.emit("evaluation.start", { runId: null, name: "Evaluation", total: 20 });
    Instrumentation.emit("evaluation.example", { runId: null, done: 1, total: 20, score: 1, failures: 0, cost: 0 });
    Instrumentation.emit("evaluation.end", { runId: null, ok: true, metrics: { accuracy: 1 } });
    Instrumentation.emit("optimizer.trial", { runId: "o1", index: 0, kind: "baseline", score: 0.5 });
    Instrumentation.emit("lm.tokens.used", { inputTokens: 10, outputTokens: 2, estimatedCost: 0.125 });
    Instrumentation.emit("optimizer.trial", { runId: "o1", index: 1, kind: "minibatch", score: 0.9 });
    Instrumentation.emit("optimizer.trial", { runId: "o1", index: 2, kind: "full", score: 0.6, error: null });
    Instrumentation.emit("lm.tokens.used", { inputTokens: 10, outputTokens: 2, estimatedCost: 0.125 });
    Instrumentation.emit("optimizer.end", { runId: "o1", status: "completed", score: 0.6, trials: 3 });
    stop();
    expect(new Set(sent.map((s) => s.message.transient.display_id)).size).toBe(1);
    expect(sent.at(-1)!.message.data["text/plain"]).toBe("MIPROv2 (done): 3 trials (1 / 4 search trials) · best (validation, chosen on it) 0.6 · failures 0 · cost $0.2500");
  });

  it("says when a run failed", () => {
    const stop = watchProgress();
    Instrumentation.emit("evaluation.start", { runId: "r3", name: "broken", total: 3 });
    Instrumentation.emit("evaluation.end", { runId: "r3", ok: false, error: "TypeError: metric threw", done: 0, total: 3 });
    stop();
    expect(sent.at(-1)!.message.data["text/plain"]).toContain("broken (failed: TypeError: metric threw)");
  });

  it("follows a real Evaluation in one display, and none when it runs with progress: false", async () => {
    const Echo = Signature.define({ name: "Echo", description: "Echo.", input: { x: z.string() }, output: { y: z.enum(["a", "b"]) } });
    const program = new Predict(Echo);
    program.configure((c) => { c.lm = new ScriptedLM(() => ({ y: "a" })); });
    const examples = ["a", "b", "a"].map((y, i) => new FewShotExample({ id: `e${i}`, input: { x: y }, output: { y } }));
    const stop = watchProgress();
    await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance: program, testExamples: examples });
    expect(sent).toHaveLength(0);
    await new Evaluation({ record: false, name: "echo" }).evaluate({ moduleInstance: program, testExamples: examples });
    stop();
    expect(new Set(sent.map((s) => s.message.transient.display_id)).size).toBe(1);
    expect(sent.at(-1)!.message.data["text/plain"]).toBe("echo (done): 3 / 3 examples · running score 0.6667 · failures 0 · cost $0.0000");
  });

  it("keeps out of a run started with progress off, and of events after it stops watching", () => {
    const stop = watchProgress();
    Instrumentation.emit("evaluation.start", { runId: "quiet", total: 2, progress: false });
    Instrumentation.emit("evaluation.example", { runId: "quiet", index: 0, score: 1 });
    stop();
    Instrumentation.emit("evaluation.start", { runId: "later", total: 2 });
    expect(sent).toHaveLength(0);
  });
});

describe("program.batch in a tslab kernel", () => {
  beforeEach(fakeKernel);

  it("follows a real program.batch in one display (inputs done, failures, cost; no score), and none with progress: false", async () => {
    const Echo = Signature.define({ name: "Echo", description: "Echo.", input: { x: z.string() }, output: { y: z.enum(["a", "b"]) } });
    const program = new Predict(Echo);
    program.configure((c) => { c.lm = new ScriptedLM((r) => (r.inputs?.x === "c" ? { y: "c" } : { y: "a" })); });
    const stop = watchProgress();
    await program.batch([{ x: "a" }, { x: "b" }], { progress: false });
    expect(sent).toHaveLength(0);
    await program.batch([{ x: "a" }, { x: "c" }, { x: "b" }], { name: "echoes" });
    stop();
    expect(new Set(sent.map((s) => s.message.transient.display_id)).size).toBe(1);
    expect(sent[0]!.message.data["text/plain"]).toBe("echoes (running): 0 / 3 inputs · failures 0 · cost $0.0000");
    expect(sent.at(-1)!.message.data["text/plain"]).toBe("echoes (done): 3 / 3 inputs · failures 1 · cost $0.0000");
  });

  it("shows a provider batch's status while the inputs wait on it", async () => {
    // The display redraws at most every 250 ms: the state is folded and drawn directly here.
    const { applyEvent, progressBundle } = await import("../../lib/notebook/progress.js");
    const state = { kind: "batch" as const, name: "batch", done: 0, total: null, searched: 0, score: null, failures: 0, cost: 0, finished: false, error: null };
    const sum = { sum: 0 };
    applyEvent(state, "batch.start", { id: "b1", name: "via batch", total: 4, concurrency: 8, via: "provider-batch" }, sum);
    applyEvent(state, "batch.provider", { id: "b1", name: "via batch", round: 1, batchId: "batch_1", status: "in_progress", counts: { total: 4, completed: 1, failed: 0 }, waited: 3 }, sum);
    expect(progressBundle(state)["text/plain"]).toBe("via batch (running): 0 / 4 inputs · failures 0 · cost $0.0000 · batch round 1: in_progress 1 / 4, 0 failed");
  });
});
