/**
 * Tool.invoke's work (tool-run.ts) loads at the first invocation. This file's first invocations are
 * made while it loads: the tool must be called in the order they were made, each with its own events.
 */
import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Instrumentation } from "../../lib/index.js";
import { tool } from "../../lib/tools/tool.js";

afterEach(() => Instrumentation.reset());

describe("Tool.invoke while its code loads", () => {
  it("calls the tool in invocation order and reports each call", async () => {
    const calls: number[] = [];
    const record = tool({
      name: "record",
      description: "Records n.",
      input: { n: z.number() },
      call: ({ n }) => {
        calls.push(n);
        return n * 10;
      },
    });
    const events: string[] = [];
    Instrumentation.subscribe(/^tool\./, (e) => events.push(`${e.name} ${JSON.stringify((e.payload as { args: unknown }).args)}`));
    const outcomes = await Promise.all([record.invoke({ n: 1 }), record.invoke('{"n":2}'), record.invoke({ n: "x" }), record.invoke({ n: 3 })]);
    expect(calls).toEqual([1, 2, 3]);
    expect(outcomes).toEqual([
      { ok: true, value: 10 },
      { ok: true, value: 20 },
      { ok: false, error: 'Invalid arguments for tool "record": n: Invalid input: expected number, received string' },
      { ok: true, value: 30 },
    ]);
    expect(events.filter((e) => e.startsWith("tool.call.start"))).toEqual([
      'tool.call.start {"n":1}', 'tool.call.start "{\\"n\\":2}"', 'tool.call.start {"n":"x"}', 'tool.call.start {"n":3}',
    ]);
    // Each invocation ends once (an invalid call ends sooner than a called one: the order of ends is not fixed).
    expect(events.filter((e) => e.startsWith("tool.call ")).sort()).toEqual([
      'tool.call "{\\"n\\":2}"', 'tool.call {"n":"x"}', 'tool.call {"n":1}', 'tool.call {"n":3}',
    ]);
  });
});
