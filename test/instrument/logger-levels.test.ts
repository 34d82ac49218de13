import { describe, expect, it } from "@jest/globals";
import { createLoggerListener } from "../../lib/instrument/logger.js";

function levelOf(payload: Record<string, unknown>, name = "evaluation.example"): string {
  const lines: string[] = [];
  const listen = createLoggerListener({ level: "debug", formatter: "json", output: (line) => lines.push(line) });
  listen({ name, payload, timestamp: "2026-11-23T00:00:00.000Z" } as never);
  expect(lines).toHaveLength(1);
  return (JSON.parse(lines[0]!) as { level: string }).level;
}

describe("logger levels", () => {
  it("an event whose error is null (a row that did not fail) is info, not error", () => {
    expect(levelOf({ id: "a", score: 1, error: null })).toBe("info");
  });
  it("an event carrying an error, or ok: false, is error", () => {
    expect(levelOf({ id: "a", error: "boom" })).toBe("error");
    expect(levelOf({ ok: false })).toBe("error");
  });
  it("chat starts are debug", () => {
    expect(levelOf({ model: "m" }, "lm.chat.start")).toBe("debug");
  });
});
