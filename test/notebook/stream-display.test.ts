import { afterEach, describe, expect, it, jest } from "@jest/globals";

type Message = { data: Record<string, unknown>; metadata: unknown; transient: { display_id?: string } };

// As in display.test.ts: the helpers find tslab's writer in the CommonJS module cache, which the
// test replaces with one holding a fake tslab module.
const FAKE_KEY = "/fake/node_modules/tslab/dist/jupyter.js";
const cache: Record<string, { exports: unknown }> = {};
jest.unstable_mockModule("node:module", () => ({ createRequire: () => ({ cache }) }));
const { display } = await import("../../lib/notebook/index.js");
const { OutputError, Predict, Signature } = await import("../../lib/index.js");
const { ChunkedLM } = await import("../helpers/chunked-lm.js");
const { z } = await import("zod");

let sent: { message: Message; update: boolean }[] = [];
afterEach(() => {
  delete cache[FAKE_KEY];
});

const Classify = Signature.define({
  name: "Classify",
  description: "Classify.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["positive", "negative"]), summary: z.string() },
});
const summary = "A glowing account of the product, at some length.";

describe("display.stream", () => {
  it("in a notebook: one display, updated in place as the fields fill in", async () => {
    sent = [];
    cache[FAKE_KEY] = { exports: { lastWriteDisplayData: (message: Message, update: boolean) => sent.push({ message, update }) } };
    const lm = new ChunkedLM([{ sentiment: "positive", summary }]);
    const s = new Predict(Classify).stream({ sentence: "x" }, { lm });
    expect(await display.stream(s, { intervalMs: 0 })).toBeUndefined();
    expect(sent.length).toBeGreaterThan(5);
    const ids = new Set(sent.map((m) => m.message.transient.display_id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^typelm-/);
    expect(sent.map((m) => m.update)).toEqual([false, ...sent.slice(1).map(() => true)]);
    const texts = sent.map((m) => m.message.data["text/plain"] as string);
    // Part of the summary, marked unfinished, before the end; the whole of it at the end.
    expect(texts.some((t) => /summary\s+writing\s+A glowing/.test(t) && !t.includes(summary))).toBe(true);
    const last = texts[texts.length - 1]!;
    expect(last.split("\n")[0]).toBe("done");
    expect(last).toMatch(new RegExp(`summary\\s+done\\s+${summary}`));
    expect(last).not.toContain("writing");
    expect((await s.result).summary).toBe(summary);
  });

  it("outside a notebook: resolves with the final bundle; a failed stream rejects and is shown failed", async () => {
    const lm = new ChunkedLM([{ sentiment: "positive", summary: "ok" }]);
    const bundle = await display.stream(new Predict(Classify).stream({ sentence: "x" }, { lm }));
    expect(bundle!["text/plain"]).toMatch(/sentiment.*positive/);
    sent = [];
    cache[FAKE_KEY] = { exports: { lastWriteDisplayData: (message: Message, update: boolean) => sent.push({ message, update }) } };
    const bad = new ChunkedLM([{ sentiment: "angry", summary }]);
    await expect(display.stream(new Predict(Classify).stream({ sentence: "x" }, { lm: bad }))).rejects.toBeInstanceOf(OutputError);
    expect(sent[sent.length - 1]!.message.data["text/plain"]).toMatch(/failed: OutputError/);
  });
});
