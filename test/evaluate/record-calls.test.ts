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
import { Evaluation, FewShotExample, LabStore, Predict, Signature } from "../../lib/index.js";
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
    // Texts over 128 characters are stored by hash, once: the system prompt and the garbled replies
    // (examples 3, 13, 23, 33, the same text); the short user messages and replies stay in the calls' rows.
    expect(system.length).toBeGreaterThan(128);
    expect(GARBLED.length).toBeGreaterThan(128);
    expect(count(path, "SELECT count(*) AS n FROM lab_texts")).toBe(2);
    expect(lab.calls(report.runId!, 13)[0]!.reply).toBe(GARBLED);
    expect(lab.calls(report.runId!, 12)[0]!.messages.map((m) => m.content)).toEqual(lm.requests.find((r) => r.inputs?.["sentence"] === "s12")!.messages.map((m) => m.content));
    // A second run of the same program adds no text it already has.
    const again = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance, testExamples });
    expect(count(path, "SELECT sum(json_array_length(calls_json)) AS n FROM lab_rows WHERE run_id = ?", again.runId)).toBe(40);
    expect(count(path, "SELECT count(*) AS n FROM lab_texts")).toBe(2);
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
