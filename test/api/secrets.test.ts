/** API.md: "No key ever appears in a log line, event payload, span, record or error message." Imports by package name (dist/). */
import { expect, jest, test } from "@jest/globals";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Instrumentation, LM, Predict, Signature, configure } from "typelm";
import type { TypelmEvent } from "typelm";
import { startFakeProvider } from "typelm/testing";
import { useTempLab } from "./temp-lab.js";

class Label extends Signature {
  static override description = "Label it.";
  static override input = { text: z.string() };
  static override output = { label: z.enum(["a", "b"]) };
}
const temp = useTempLab("secrets");

test("a provider error echoing the key reaches no event, log line, stored row or error message", async () => {
  const KEY = "sk-proj-SECRETKEY0123456789abcdef";
  const fake = await startFakeProvider();
  const events: TypelmEvent[] = [];
  const lines: string[] = [];
  const off = Instrumentation.subscribe(/.*/, (e) => { events.push(e); });
  const spy = jest.spyOn(process.stderr, "write").mockImplementation((chunk: any) => { lines.push(String(chunk)); return true; });
  try {
    configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["logger"]; c.logger.level = "debug"; c.logger.formatter = "json"; });
    fake.fail({ status: 401, times: 1, body: { error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error" } } });
    fake.reply({ label: "a" });
    const m = new Predict(Label);
    m.configure((c) => { c.lm = new LM("openai/gpt-4o-mini", { apiKey: KEY, baseURL: fake.openaiBaseURL }); });
    const data = ["x", "y"].map((w) => new FewShotExample({ input: { text: w }, output: { label: "a" }, id: w }));
    const report = await new Evaluation({ progress: false, concurrency: 1 }).evaluate({ moduleInstance: m, testExamples: data });
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0]!.error).toMatch(/401|key/i);
    expect(JSON.stringify(report.results)).not.toContain(KEY);
  } finally { spy.mockRestore(); off(); await fake.close(); }
  expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`); // the key did go to the provider
  expect(events.length).toBeGreaterThan(0);
  expect(JSON.stringify(events)).not.toContain(KEY);
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.join("")).not.toContain(KEY);
  for (const file of readdirSync(temp.dir)) expect(readFileSync(join(temp.dir, file)).includes(KEY)).toBe(false);
});
