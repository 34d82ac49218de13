import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { ValidationError } from "../../lib/errors.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { Tool, tool } from "../../lib/tools/tool.js";
import { Toolset, toolEntry } from "../../lib/tools/toolset.js";

const weatherInput = { city: z.string().describe("city name"), units: z.enum(["c", "f"]).default("c"), days: z.number().int().optional() };

class Weather extends Tool<typeof weatherInput> {
  readonly name = "weather";
  readonly description = "Current weather for a city";
  readonly input = weatherInput;
  async call({ city, units }: { city: string; units: "c" | "f" }) {
    if (city === "Atlantis") throw new Error("city is under water");
    return `${city}: 21°${units.toUpperCase()}`;
  }
}

afterEach(() => Instrumentation.reset());

describe("Tool", () => {
  it("describes its parameters as a JSON schema object", () => {
    expect(new Weather().jsonSchema()).toEqual({
      type: "object",
      properties: {
        city: { type: "string", description: "city name" },
        units: { type: "string", enum: ["c", "f"], default: "c" },
        days: { type: "integer" },
      },
      required: ["city"],
    });
  });

  it("validates arguments, applies defaults and calls", async () => {
    expect(await new Weather().invoke({ city: "Oslo" })).toEqual({ ok: true, value: "Oslo: 21°C" });
    expect(await new Weather().invoke('{"city":"Rome","units":"f"}')).toEqual({ ok: true, value: "Rome: 21°F" });
  });

  it("turns invalid arguments into an error naming the field, expected and received", async () => {
    const missing = await new Weather().invoke({});
    expect(missing).toEqual({ ok: false, error: 'Invalid arguments for tool "weather": city: Invalid input: expected string, received undefined' });
    const wrong = await new Weather().invoke({ city: "Oslo", units: "kelvin" });
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.error).toMatch(/units: .*"c".*"f"/);
    const notJson = await new Weather().invoke("city=Oslo");
    expect(notJson).toEqual({ ok: false, error: 'Invalid arguments for tool "weather": expected a JSON object, received "city=Oslo"' });
  });

  it("catches errors thrown by call", async () => {
    expect(await new Weather().invoke({ city: "Atlantis" })).toEqual({ ok: false, error: 'Tool "weather" failed: city is under water' });
  });

  it("emits a tool.call event for every call", async () => {
    const events: TypelmEvent[] = [];
    Instrumentation.subscribe("tool.call", (e) => events.push(e));
    // Every event carries its span's ids; each call runs in a span of its own, at the root here.
    const ids = { traceId: expect.stringMatching(/^[0-9a-f]{32}$/), spanId: expect.stringMatching(/^[0-9a-f]{16}$/), parentSpanId: null };
    await new Weather().invoke({ city: "Oslo" });
    await new Weather().invoke({ city: 1 });
    expect(events.map((e) => e.payload)).toEqual([
      { tool: "weather", args: { city: "Oslo" }, ok: true, durationMs: expect.any(Number), ...ids },
      { tool: "weather", args: { city: 1 }, ok: false, durationMs: expect.any(Number), error: expect.stringContaining("city"), ...ids },
    ]);
  });
});

describe("tool()", () => {
  it("builds a tool whose call receives typed, defaulted arguments", async () => {
    const echo = tool({
      name: "echo",
      description: "Repeat text",
      input: { text: z.string(), times: z.number().int().default(2) },
      call: async ({ text, times }) => text.repeat(times),
    });
    expect(echo).toBeInstanceOf(Tool);
    expect(await echo.invoke({ text: "ab" })).toEqual({ ok: true, value: "abab" });
    expect(echo.jsonSchema().required).toEqual(["text"]);
  });

  it("rejects a bad definition up front", () => {
    const call = () => 1;
    expect(() => tool({ name: "bad name!", description: "", input: {}, call })).toThrow(ValidationError);
    expect(() => tool({ name: "ok", description: "d", input: { x: "string" as never }, call })).toThrow(/input: expected a zod shape/);
  });
});

class Files extends Toolset {
  static override toolsetName = "files";
  static override tools = {
    read_file: toolEntry({ description: "Read a file", input: { path: z.string() }, call: async ({ path }) => `contents of ${path}` }),
    list_files: toolEntry({ description: "List files", input: {}, call: () => ["a.txt"] }),
  };
}

describe("Toolset", () => {
  it("turns static tools into Tool objects named by their keys", async () => {
    const tools = Files.toTools();
    expect(tools.map((t) => t.name)).toEqual(["read_file", "list_files"]);
    expect(tools.every((t) => t instanceof Tool)).toBe(true);
    expect(tools[0]!.description).toBe("Read a file");
    expect(tools[0]!.jsonSchema()).toEqual({ type: "object", properties: { path: { type: "string" } }, required: ["path"] });
    expect(tools[1]!.jsonSchema()).toEqual({ type: "object", properties: {}, required: [] });
    expect(await tools[0]!.invoke({ path: "x.txt" })).toEqual({ ok: true, value: "contents of x.txt" });
  });

  it("rejects an empty toolset", () => {
    class Empty extends Toolset {}
    expect(() => Empty.toTools()).toThrow(/static tools is empty/);
  });
});
