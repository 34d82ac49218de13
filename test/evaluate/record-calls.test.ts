/**
 * Evaluations record each row's model calls in the lab store: the messages sent, the raw reply, the
 * model, tokens, latency and cache hits, each text stored once by its hash; `recordCalls: false` and
 * `record: false` record none.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, Predict, Signature, type EvaluationRow } from "../../lib/index.js";
import { registerSecret } from "../../lib/instrument/redact.js";
import { openStoreSync } from "../../lib/store/db.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-calls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

/** A reply long enough to be stored by its hash (short texts stay in the call's row). */
const GARBLED = `<img src=x onerror=alert(1)> not json ${"and more words ".repeat(12)}`;

function setup(count: number) {
  // Example 3 gets a reply that is not JSON (its row fails; its call is still kept).
  const lm = new ScriptedLM((req) => (String(req.inputs?.["sentence"]).endsWith("3") ? GARBLED : { sentiment: "positive" }));
  const moduleInstance = new Predict(Classify).configure((c) => { c.lm = lm; });
  const testExamples = Array.from({ length: count }, (_, i) => new FewShotExample({
    input: { sentence: `s${i}` }, output: { sentiment: "positive" }, id: `ex-${i}`,
  }));
  return { lm, moduleInstance, testExamples };
}

function row(index: number): EvaluationRow {
  return {
    index, exampleId: `ex-${index}`, inputs: { sentence: `s${index}` }, expected: { sentiment: "positive" }, prediction: { sentiment: "positive" },
    scores: { accuracy: 1 }, error: null, durationMs: 5, inputTokens: 360, outputTokens: 24, cost: 0.0000342,
  };
}

function count(path: string, sql: string, ...params: unknown[]): number {
  return (openStoreSync(path).prepare(sql).get(...params) as { n: number }).n;
}

describe("recording each row's model calls", () => {
  it("keeps the messages sent and the raw reply of every call, with model, tokens, latency and cache flag", async () => {
    const path = join(dir, "calls.sqlite");
    const lab = LabStore.open(path);
    const { lm, moduleInstance, testExamples } = setup(5);
    const report = await new Evaluation({ lab, progress: false, concurrency: 2 }).evaluate({ moduleInstance, testExamples });
    const runId = report.runId!;
    expect(lm.requests).toHaveLength(5);
    for (const row of report.results) {
      const calls = lab.calls(runId, row.index);
      expect(calls).toHaveLength(1);
      // What the model was sent for this example, as the scripted model received it.
      const sent = lm.requests.find((r) => r.inputs?.["sentence"] === `s${row.index}`)!;
      expect(calls[0]!.messages).toEqual(sent.messages.map((m) => ({ role: m.role, content: m.content })));
      expect(calls[0]).toMatchObject({ provider: "scripted", cached: false, inputTokens: row.inputTokens, outputTokens: row.outputTokens });
      expect(calls[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    }
    expect(lab.calls(runId, 3)[0]!.reply).toBe(GARBLED);
    // The reply as the model wrote it (the scripted model fences its JSON), not the parsed prediction.
    expect(lab.calls(runId, 0)[0]!.reply).toMatch(/^```json\n\{\s*"sentiment":\s*"positive"\s*\}\n```$/);
    expect(report.results[3]!.error).toMatch(/^OutputError/);
  });

  it("stores a text sent with every call once: the system prompt is one row of lab_texts for 40 calls", async () => {
    const path = join(dir, "once.sqlite");
    const lab = LabStore.open(path);
    const { lm, moduleInstance, testExamples } = setup(40);
    const report = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance, testExamples });
    const system = lm.requests[0]!.messages.find((m) => m.role === "system")!.content;
    expect(lm.requests.every((r) => r.messages.find((m) => m.role === "system")!.content === system)).toBe(true);
    expect(count(path, "SELECT sum(json_array_length(calls_json)) AS n FROM lab_rows WHERE run_id = ?", report.runId)).toBe(40);
    expect(count(path, "SELECT count(*) AS n FROM lab_texts WHERE text = ?", system)).toBe(1);
    // Texts over 128 characters that a later call may send again are stored by hash, once: the system
    // prompt. The replies (the garbled one of examples 3, 13, 23, 33 too) and the user messages are
    // each example's own and stay in the calls' rows.
    expect(system.length).toBeGreaterThan(128);
    expect(GARBLED.length).toBeGreaterThan(128);
    expect(count(path, "SELECT count(*) AS n FROM lab_texts")).toBe(1);
    expect(lab.calls(report.runId!, 13)[0]!.reply).toBe(GARBLED);
    expect(lab.calls(report.runId!, 12)[0]!.messages.map((m) => m.content)).toEqual(lm.requests.find((r) => r.inputs?.["sentence"] === "s12")!.messages.map((m) => m.content));
    // A second run of the same program adds no text it already has.
    const again = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance, testExamples });
    expect(count(path, "SELECT sum(json_array_length(calls_json)) AS n FROM lab_rows WHERE run_id = ?", again.runId)).toBe(40);
    expect(count(path, "SELECT count(*) AS n FROM lab_texts")).toBe(1);
  });

  it("keeps a row's own long texts in its row, and little besides the texts: a call costs its texts and a few dozen bytes", async () => {
    const path = join(dir, "compact.sqlite");
    const lab = LabStore.open(path);
    const runId = lab.startRun({ kind: "evaluation", name: "compact" });
    const system = `You classify sentences. ${"Be careful and consistent. ".repeat(10)}`;
    const demo = `sentence: a demo sentence that is long enough to be kept by its hash ${"and then some more words ".repeat(5)}`;
    const user = `sentence: the sentence of this example, long as a review can be ${"with many more words ".repeat(8)}`;
    const reply = `{"sentiment": "positive", "reasoning": "${"a long reasoning ".repeat(10)}"}`;
    for (const text of [system, demo, user, reply]) expect(text.length).toBeGreaterThan(128);
    const call = (i: number) => ({
      provider: "openai", model: "gpt-4o-mini", reply: `${reply}${i}`, inputTokens: 180, outputTokens: 12, cost: 0.0000342, latencyMs: 512.25, cached: false,
      messages: [{ role: "system" as const, content: system }, { role: "user" as const, content: demo },
        { role: "assistant" as const, content: "sentiment: negative" }, { role: "user" as const, content: `${user}${i}` }],
    });
    for (let i = 0; i < 3; i++) lab.recordExample(runId, { ...row(i) }, [call(i), { ...call(i), cached: true, cost: null }]);
    // The system prompt and the demo are stored once; the user message and the reply of each example stay in its row.
    const db = openStoreSync(path);
    expect((db.prepare("SELECT text FROM lab_texts ORDER BY text").all() as { text: string }[]).map((t) => t.text)).toEqual([demo, system].sort());
    // What the calls cost in the file: their rows' calls_json and lab_texts. Each example's own texts,
    // the shared ones once, and per call at most 2 references by hash and 90 bytes besides.
    const stored = (db.prepare("SELECT sum(length(calls_json)) AS n FROM lab_rows WHERE run_id = ?").get(runId) as { n: number }).n +
      (db.prepare("SELECT sum(length(hash) + length(text)) AS n FROM lab_texts").get() as { n: number }).n;
    let own = 0;
    for (let i = 0; i < 3; i++) own += 2 * (`${user}${i}`.length + JSON.stringify(`${reply}${i}`).length - 2 + "sentiment: negative".length);
    expect(stored).toBeLessThanOrEqual(own + system.length + demo.length + 3 * 2 * (2 * 35 + 90));
    for (let i = 0; i < 3; i++) expect(lab.calls(runId, i)).toEqual([call(i), { ...call(i), cached: true, cost: null }]);
  });

  it("reads back the calls of a store written before the compact form (objects with provider, messages, replyHash)", () => {
    const path = join(dir, "old-form.sqlite");
    const lab = LabStore.open(path);
    const runId = lab.startRun({ kind: "evaluation", name: "old" });
    lab.recordExample(runId, row(0));
    const db = openStoreSync(path);
    const system = `You are careful. ${"x".repeat(130)}`;
    const reply = `{"sentiment":"positive","why":"${"y".repeat(130)}"}`;
    db.prepare("INSERT INTO lab_texts (hash, text) VALUES (?, ?), (?, ?)").run("00112233445566778899aabbccddeeff", system, "ffeeddccbbaa99887766554433221100", reply);
    const old = '[{"provider":"openai","model":"gpt-4o-mini","messages":[{"role":"system","text":"00112233445566778899aabbccddeeff"},' +
      '{"role":"user","content":"sentence: s0"}],"replyHash":"ffeeddccbbaa99887766554433221100","inputTokens":180,"outputTokens":12,' +
      '"cost":null,"latencyMs":512.25,"cached":true},{"provider":"anthropic","model":"claude-3-5-haiku","messages":[{"role":"user","content":"again"}],' +
      '"reply":"short","inputTokens":5,"outputTokens":1,"cost":0.5,"latencyMs":3,"cached":false}]';
    db.prepare("UPDATE lab_rows SET calls_json = ? WHERE run_id = ? AND idx = 0").run(old, runId);
    expect(lab.calls(runId, 0)).toEqual([
      { provider: "openai", model: "gpt-4o-mini", messages: [{ role: "system", content: system }, { role: "user", content: "sentence: s0" }],
        reply, inputTokens: 180, outputTokens: 12, cost: null, latencyMs: 512.25, cached: true },
      { provider: "anthropic", model: "claude-3-5-haiku", messages: [{ role: "user", content: "again" }], reply: "short",
        inputTokens: 5, outputTokens: 1, cost: 0.5, latencyMs: 3, cached: false },
    ]);
  });

  it("recordCalls: false records the rows without their calls; record: false records nothing", async () => {
    const path = join(dir, "off.sqlite");
    const lab = LabStore.open(path);
    const { moduleInstance, testExamples } = setup(4);
    const report = await new Evaluation({ lab, progress: false, recordCalls: false }).evaluate({ moduleInstance, testExamples });
    expect(lab.rows(report.runId!)).toHaveLength(4);
    expect(count(path, "SELECT count(*) AS n FROM lab_rows WHERE calls_json IS NOT NULL")).toBe(0);
    expect(count(path, "SELECT count(*) AS n FROM lab_texts")).toBe(0);
    const unrecorded = await new Evaluation({ lab, progress: false, record: false }).evaluate({ moduleInstance, testExamples });
    expect(unrecorded.runId).toBeNull();
    expect(count(path, "SELECT count(*) AS n FROM lab_rows WHERE calls_json IS NOT NULL")).toBe(0);
  });

  it("masks a registered key in what it stores of a call", async () => {
    const path = join(dir, "secret.sqlite");
    const lab = LabStore.open(path);
    const key = "sk-recorded-call-secret-0123456789";
    registerSecret(key);
    const lm = new ScriptedLM(() => ({ sentiment: "positive" }));
    const moduleInstance = new Predict(Classify).configure((c) => { c.lm = lm; });
    const long = `my key is ${key} ${"and a long sentence ".repeat(8)}`;
    const testExamples = [new FewShotExample({ input: { sentence: `key ${key}` }, output: { sentiment: "positive" }, id: "a" }),
      new FewShotExample({ input: { sentence: long }, output: { sentiment: "positive" }, id: "b" })];
    const report = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance, testExamples });
    expect(lm.requests.some((r) => r.messages.some((m) => m.content.includes(key)))).toBe(true);
    for (const index of [0, 1]) {
      const user = lab.calls(report.runId!, index)[0]!.messages.find((m) => m.role === "user")!.content;
      expect(user).not.toContain(key);
      expect(user).toContain("key");
    }
    const db = openStoreSync(path);
    const everything = JSON.stringify([db.prepare("SELECT * FROM lab_rows").all(), db.prepare("SELECT * FROM lab_texts").all()]);
    expect(everything).not.toContain(key);
  });
});
