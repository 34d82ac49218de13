import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Temporal, t } from "../../lib/signature/temporal.js";
import { tool } from "../../lib/tools/tool.js";
import { describeTools } from "../../lib/predict/agent-tools.js";
import { ReAct } from "../../lib/predict/react.js";
import { Signature } from "../../lib/signature/signature.js";
import { ScriptedLM } from "../../lib/testing/index.js";

// Date-typed tool inputs must behave like date-typed signature inputs: the model sees `format`,
// and `call` receives Temporal / Date values made from the ISO strings the model writes.
function scheduler(seen: unknown[]) {
  return tool({
    name: "schedule",
    description: "Book a meeting",
    input: {
      day: t.date().describe("meeting day"),
      start: t.dateTime(),
      remindAt: z.date().optional(),
      also: z.array(t.date()).default([]),
    },
    call: (args) => {
      seen.push(args);
      return "booked";
    },
  });
}

describe("date-typed tool inputs", () => {
  it("describe themselves in the parameter schema with a format", () => {
    expect(scheduler([]).jsonSchema()).toEqual({
      type: "object",
      properties: {
        day: { type: "string", format: "date", description: "meeting day" },
        start: { type: "string", format: "date-time" },
        remindAt: { type: "string", format: "date-time" },
        also: { type: "array", items: { type: "string", format: "date" }, default: [] },
      },
      required: ["day", "start"],
    });
  });

  it("show their schema (not {}) in the agent's tool list", () => {
    const line = describeTools([scheduler([])]);
    const shown = JSON.parse(line.slice(line.indexOf("Arguments (JSON Schema): ") + 25)) as { properties: Record<string, unknown> };
    expect(shown.properties.day).toEqual({ type: "string", format: "date", description: "meeting day" });
    expect(shown.properties.remindAt).toEqual({ type: "string", format: "date-time" });
  });

  it("reach call as Temporal and Date values made from ISO strings", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const outcome = await scheduler(seen).invoke(
      '{"day":"2024-05-01","start":"2024-05-01T09:30:00+02:00","remindAt":"2024-04-30T08:00:00Z","also":["2024-05-02"]}',
    );
    expect(outcome).toEqual({ ok: true, value: "booked" });
    const args = seen[0]!;
    expect(args.day).toBeInstanceOf(Temporal.PlainDate);
    expect(String(args.day)).toBe("2024-05-01");
    expect(args.start).toBeInstanceOf(Temporal.ZonedDateTime);
    expect((args.start as Temporal.ZonedDateTime).offset).toBe("+02:00");
    expect((args.start as Temporal.ZonedDateTime).hour).toBe(9);
    expect(args.remindAt).toBeInstanceOf(Date);
    expect((args.remindAt as Date).toISOString()).toBe("2024-04-30T08:00:00.000Z");
    expect((args.also as unknown[]).map(String)).toEqual(["2024-05-02"]);
  });

  it("report an impossible date as an argument error naming the field", async () => {
    const seen: unknown[] = [];
    const outcome = await scheduler(seen).invoke({ day: "2024-02-30", start: "2024-05-01T09:30:00Z" });
    expect(outcome).toEqual({
      ok: false,
      error: 'Invalid arguments for tool "schedule": Input field "day" of tool "schedule": expected date (YYYY-MM-DD), received "2024-02-30"',
    });
    expect(seen).toEqual([]);
  });

  it("work end to end in a ReAct run: the model sees the format, the tool gets a PlainDate", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const weekday = tool({
      name: "weekday",
      description: "The weekday of a date.",
      input: { day: t.date() },
      call: (args) => {
        seen.push(args);
        return args.day.dayOfWeek;
      },
    });
    const Ask = Signature.define({ name: "Ask", input: { question: z.string() }, output: { answer: z.string() } });
    const lm = new ScriptedLM([
      { thought: "Look it up.", action: "weekday", toolInput: { day: "2024-02-29" } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "Thursday" },
    ]);
    const r = await new ReAct(Ask, { tools: [weekday] }).call({ question: "What day was 2024-02-29?" }, { lm });
    expect(r.answer).toBe("Thursday");
    expect(seen[0]!.day).toBeInstanceOf(Temporal.PlainDate);
    expect(r.history[0]!.observation).toBe(4); // ISO weekday: Thursday
    // The tool list reaches the step predictor as an input value (JSON-escaped in the user message).
    expect(String(lm.requests[0]!.inputs?.availableTools)).toContain('"day":{"type":"string","format":"date"}');
  });
});
