// Production traces on the SQLite lab: sampling decided before any work, written behind the call,
// a failing or slow store never failing or slowing the call, the queue's bound, feedback, redaction.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, resetConfiguration } from "../../lib/config.js";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { registerSecret } from "../../lib/instrument/redact.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { flushTraces, recordFeedback, traceCounters } from "../../lib/trace-call.js";
import { setTraceSink } from "../../lib/traces/recorder.js";
import { feedbackFor } from "../../lib/traces/feedback.js";
import { ValidationError } from "../../lib/errors.js";
import { controlledSink, Shouter, shoutingLM } from "./helpers.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "typelm-traces-"));
});
afterEach(async () => {
  await flushTraces();
  setTraceSink(undefined);
  resetConfiguration();
  Instrumentation.reset();
  rmSync(dir, { recursive: true, force: true });
});

function program() {
  return new Shouter().configure((c) => { c.lm = shoutingLM(); });
}

describe("sampling", () => {
  it("sample 0 records nothing: no store is opened, no sink is called, no id is given", async () => {
    const path = join(dir, "lab.sqlite");
    const sink = controlledSink();
    setTraceSink(sink);
    configure((c) => { c.lab = { path }; c.traces = { sample: 0 }; });
    const before = traceCounters();
    const sampled: unknown[] = [];
    Instrumentation.subscribe(/^traces\./, (e) => sampled.push(e.name));
    for (let i = 0; i < 20; i++) {
      const out = await program().call({ word: `w${i}` });
      expect((out as { traceId?: string }).traceId).toBeUndefined();
    }
    await flushTraces();
    expect(sink.batches).toEqual([]);
    expect(sampled).toEqual([]);
    expect(existsSync(path)).toBe(false);
    expect(traceCounters()).toEqual(before);
  });

  it("sample 1 records every top-level call once (not its predictors), with inputs, outputs, calls, latency and the trace id", async () => {
    const path = join(dir, "lab.sqlite");
    configure((c) => { c.lab = { path }; c.traces = { sample: 1 }; });
    const ids: string[] = [];
    for (const word of ["a", "b", "c"]) {
      const out = await program().call({ word });
      ids.push((out as { traceId?: string }).traceId!);
    }
    expect(ids.every((id) => /^[0-9a-f]{32}$/.test(id))).toBe(true);
    await flushTraces();
    const lab = LabStore.open(path);
    const runs = lab.runs({ kind: "traces" });
    const day = new Date().toISOString().slice(0, 10);
    expect(runs.map((r) => [r.kind, r.name, r.config])).toEqual([["traces", `Shouter ${day}`, { module: "Shouter", day }]]);
    const rows = lab.rows(runs[0]!.id);
    expect(rows.map((r) => r.exampleId)).toEqual(ids);
    expect(rows.map((r) => [r.inputs, r.prediction, r.error])).toEqual([
      [{ word: "a" }, { loud: "A" }, null], [{ word: "b" }, { loud: "B" }, null], [{ word: "c" }, { loud: "C" }, null],
    ]);
    expect(rows.every((r) => r.durationMs >= 0 && r.inputTokens > 0)).toBe(true);
    const calls = lab.calls(runs[0]!.id, rows[0]!.index);
    expect(calls.map((c) => [c.provider, c.reply.includes("A")])).toEqual([["scripted", true], ["scripted", true]]);
  });

  it("records a failed call with its error, and the error carries the trace id", async () => {
    const path = join(dir, "lab.sqlite");
    configure((c) => { c.lab = { path }; c.traces = { sample: 1 }; });
    const error = await program().call({ word: "boom" }).then(() => null, (e: unknown) => e as Error & { traceId?: string });
    expect(error).not.toBeNull();
    await flushTraces();
    const lab = LabStore.open(path);
    const [row] = lab.rows(lab.runs({ kind: "traces" })[0]!.id);
    expect(row!.exampleId).toBe(error!.traceId);
    expect(row!.prediction).toBeNull();
    expect(row!.error).toContain(error!.name);
  });

  it("a fractional sample with a seed draws the same calls every time, near the share asked", async () => {
    const draw = async () => {
      const sink = controlledSink();
      setTraceSink(sink);
      configure((c) => { c.traces = { sample: 0.3, seed: 7 }; });
      const picked: number[] = [];
      for (let i = 0; i < 200; i++) {
        const out = await program().call({ word: `w${i}` });
        if ((out as { traceId?: string }).traceId !== undefined) picked.push(i);
      }
      await flushTraces();
      expect(sink.batches.flat().map((r) => r.inputs.word)).toEqual(picked.map((i) => `w${i}`));
      return picked;
    };
    const first = await draw();
    resetConfiguration();
    const second = await draw();
    expect(second).toEqual(first);
    // 200 draws at 0.3: mean 60, sd 6.5; [30, 90] is more than 4.5 sd either side.
    expect(first.length).toBeGreaterThanOrEqual(30);
    expect(first.length).toBeLessThanOrEqual(90);
  });

  it("modules limits recording to the named top-level modules", async () => {
    const sink = controlledSink();
    setTraceSink(sink);
    configure((c) => { c.traces = { sample: 1, modules: ["SomethingElse"] }; });
    const out = await program().call({ word: "x" });
    await flushTraces();
    expect((out as { traceId?: string }).traceId).toBeUndefined();
    expect(sink.batches).toEqual([]);
  });
});

describe("written behind the call", () => {
  it("a failing store never fails the call: traces.record.error is emitted and the failure counted", async () => {
    setTraceSink({ write() { throw new Error("disk on fire"); } });
    configure((c) => { c.traces = { sample: 1 }; });
    const errors: Record<string, unknown>[] = [];
    Instrumentation.subscribe("traces.record.error", (e) => errors.push(e.payload));
    const failedBefore = traceCounters().failed;
    const out = await program().call({ word: "ok" });
    expect(out.loud).toBe("OK");
    await flushTraces();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error).toBe("Error: disk on fire");
    expect(traceCounters().failed - failedBefore).toBe(1);
  });

  it("a slow store does not delay the caller: calls finish while a write is still pending", async () => {
    const sink = controlledSink();
    sink.hold();
    setTraceSink(sink);
    configure((c) => { c.traces = { sample: 1 }; });
    await program().call({ word: "one" });
    await sink.wrote; // the first write has started and is held
    for (const word of ["two", "three"]) expect((await program().call({ word })).loud).toBe(word.toUpperCase());
    expect(sink.batches.flat().map((r) => r.inputs.word)).toEqual(["one"]);
    expect(traceCounters().pending).toBe(2);
    const writtenBefore = traceCounters().written;
    sink.release();
    await flushTraces();
    expect(sink.batches.flat().map((r) => r.inputs.word)).toEqual(["one", "two", "three"]);
    expect(traceCounters().written - writtenBefore).toBe(3);
  });

  it("the queue is bounded: traces beyond maxQueue are dropped, counted and reported", async () => {
    const sink = controlledSink();
    sink.hold();
    setTraceSink(sink);
    configure((c) => { c.traces = { sample: 1, maxQueue: 3 }; });
    const dropped: unknown[] = [];
    Instrumentation.subscribe("traces.dropped", (e) => dropped.push(e.payload.dropped));
    const droppedBefore = traceCounters().dropped;
    await program().call({ word: "w0" });
    await sink.wrote; // w0 is being written (held); the queue is empty
    for (let i = 1; i < 10; i++) await program().call({ word: `w${i}` });
    expect(traceCounters().dropped - droppedBefore).toBe(6);
    expect(dropped).toHaveLength(6);
    sink.release();
    await flushTraces();
    expect(sink.batches.flat().map((r) => r.inputs.word)).toEqual(["w0", "w1", "w2", "w3"]);
  });
});

describe("feedback and redaction", () => {
  it("recordFeedback stores a user's score and comment with the trace", async () => {
    const path = join(dir, "lab.sqlite");
    configure((c) => { c.lab = { path }; c.traces = { sample: 1 }; });
    const out = await program().call({ word: "refund" });
    const traceId = (out as { traceId?: string }).traceId!;
    await recordFeedback(traceId, { score: 0, comment: "wrong refund amount" });
    await recordFeedback(traceId, { score: 1 });
    await flushTraces();
    const found = await feedbackFor(LabStore.open(path), [traceId, "other"]);
    expect([...found.keys()]).toEqual([traceId]);
    expect(found.get(traceId)!.map((f) => [f.score, f.comment])).toEqual([[0, "wrong refund amount"], [1, null]]);
    await expect(recordFeedback(traceId, { score: Number.NaN })).rejects.toThrow(ValidationError);
    await expect(recordFeedback("", { score: 1 })).rejects.toThrow(ValidationError);
  });

  it("keys never reach the lab: registered secrets are masked in traced inputs and feedback", async () => {
    const path = join(dir, "lab.sqlite");
    const key = "sk-tracetest-0123456789abcdef";
    registerSecret(key);
    configure((c) => { c.lab = { path }; c.traces = { sample: 1 }; });
    const out = await program().call({ word: `key ${key}` });
    await recordFeedback((out as { traceId?: string }).traceId!, { score: 0, comment: `leaked ${key}` });
    await flushTraces();
    const { openStoreSync } = await import("../../lib/store/db.js");
    const db = openStoreSync(path);
    const everything = JSON.stringify([db.prepare("SELECT * FROM lab_rows").all(), db.prepare("SELECT * FROM lab_feedback").all()]);
    expect(everything).not.toContain(key);
    expect(everything).toContain("key ");
  });
});
