/**
 * The native tool-calling example of docs/predictors-and-agents.md: the guide shows
 * docs/examples/native-tools.ts verbatim, and it runs through the openai SDK against the fake
 * provider, whose scripted model asks for both cities' weather in one turn, then calls finish.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { LM } from "typelm";
import { startFakeProvider, toolCalls, type FakeProvider } from "typelm/testing";
import { planTrip } from "../../docs/examples/native-tools.js";

let fake: FakeProvider;
beforeAll(async () => { fake = await startFakeProvider(); });
afterAll(async () => { await fake.close(); });

describe("docs/predictors-and-agents.md's native tool-calling example", () => {
  it("is the file the test runs", () => {
    const guide = readFileSync("docs/predictors-and-agents.md", "utf8");
    expect(guide).toContain("```ts\n" + readFileSync("docs/examples/native-tools.ts", "utf8") + "```");
  });

  it("runs both weather calls of one turn and returns the typed answer", async () => {
    fake.reply(toolCalls([
      { id: "call_1", name: "weather", arguments: { city: "Oslo" } },
      { id: "call_2", name: "weather", arguments: { city: "Lisbon" } },
    ]));
    fake.reply(toolCalls([{ id: "call_3", name: "finish", arguments: { advice: "Pack light for Lisbon.", warmer: "Lisbon" } }]));
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-not-a-key", baseURL: fake.openaiBaseURL });
    const r = await planTrip("Oslo", "Lisbon", lm);
    expect(r.warmer).toBe("Lisbon");
    expect(r.history.map((s) => [s.callId, s.observation])).toEqual([
      ["call_1", { city: "Oslo", celsius: 9 }], ["call_2", { city: "Lisbon", celsius: 21 }], ["call_3", null],
    ]);
    expect(fake.requests[1]!.toolResults.map((x) => [x.callId, x.content])).toEqual([
      ["call_1", '{"city":"Oslo","celsius":9}'], ["call_2", '{"city":"Lisbon","celsius":21}'],
    ]);
  });
});
