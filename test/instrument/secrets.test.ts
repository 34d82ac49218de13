import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import {
  Evaluation, FewShotExample, Instrumentation, LM, Module, Predict, ReAct, Signature, configure, resetConfiguration, tool, type TypelmEvent,
} from "../../lib/index.js";
import { shutdownPipelines } from "../../lib/instrument/otel-export.js";
import { closeStore, openStore } from "../../lib/store/db.js";
import { ScriptedLM, startFakeProvider, type FakeProvider } from "../../lib/testing/index.js";
import { startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.js";

const LM_KEY = "sk-proj-secretsTEST-0123456789abcdef";
const LANGFUSE_PUBLIC = "pk-lf-secrets-public-42";
const LANGFUSE_SECRET = "sk-lf-secrets-SECRET-42";
const NR_LICENSE = "eu01xx-secrets-LICENSE-42";
const BASIC = Buffer.from(`${LANGFUSE_PUBLIC}:${LANGFUSE_SECRET}`).toString("base64");
const SECRETS = [LM_KEY, LANGFUSE_SECRET, NR_LICENSE, BASIC];

const Echo = Signature.define({ name: "Echo", input: { text: z.string() }, output: { text: z.string() } });
const Question = Signature.define({ name: "Question", input: { question: z.string() }, output: { answer: z.string() } });

const dir = mkdtempSync(join(tmpdir(), "typelm-secrets-"));
const cachePath = join(dir, "cache.sqlite");
const labPath = join(dir, "lab.sqlite");
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const saved = { ...process.env };
let fake: FakeProvider;
let langfuse: OtlpReceiver;
let newrelic: OtlpReceiver;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  fake = await startFakeProvider();
  langfuse = await startOtlpReceiver();
  newrelic = await startOtlpReceiver();
  Object.assign(process.env, {
    LANGFUSE_HOST: langfuse.url, LANGFUSE_PUBLIC_KEY: LANGFUSE_PUBLIC, LANGFUSE_SECRET_KEY: LANGFUSE_SECRET,
    NEW_RELIC_OTLP_ENDPOINT: newrelic.url, NEW_RELIC_LICENSE_KEY: NR_LICENSE,
    // Prompt text on otel spans too, so the widest set of attributes is checked.
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
  });
});
afterAll(async () => {
  resetConfiguration();
  LM.resetConfiguration();
  Instrumentation.reset();
  await shutdownPipelines();
  trace.disable();
  await provider.shutdown();
  await fake.close();
  await langfuse.close();
  await newrelic.close();
  await closeStore(cachePath);
  await closeStore(labPath);
  rmSync(dir, { recursive: true, force: true });
  process.env = saved;
});

/** Every row of every table of a SQLite file, as text. */
async function allRows(path: string): Promise<{ table: string; text: string }[]> {
  const db = await openStore(path);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  return tables.flatMap(({ name }) => (db.prepare(`SELECT * FROM "${name}"`).all() as unknown[]).map((row) => ({ table: name, text: JSON.stringify(row) })));
}

describe("a run with every subscriber on", () => {
  it("puts no key in any event, span, log line, exported OTLP body, error message or store row", async () => {
    const lines: string[] = [];
    const events: TypelmEvent[] = [];
    const errors: Error[] = [];
    configure((c) => {
      c.instrumentation.enabled = true;
      c.instrumentation.subscribers = ["logger", "otel", "langfuse", "newrelic"];
      c.logger.level = "debug";
      c.logger.formatter = "json";
      c.logger.output = (line) => lines.push(line);
      c.lab = { path: labPath };
    });
    Instrumentation.subscribe(/.*/, (e) => events.push(e));
    LM.configure((c) => {
      c.retryDelay = 0.01;
      c.maxRetries = 1;
    });
    const lm = new LM("openai/gpt-4o-mini", { apiKey: LM_KEY, baseURL: fake.openaiBaseURL, cache: { path: cachePath } });
    const echo = `Incorrect API key provided: ${LM_KEY}. Authorization: Bearer ${LM_KEY}`;

    // A success, a retried 500 whose body echoes the key, and a 401 that does too.
    fake.reply({ text: "one" });
    await new Predict(Echo).call({ text: "one" }, { lm });
    fake.fail({ status: 500, times: 1, retryAfterMs: 0, body: { error: { message: echo, type: "server_error" } } }).reply({ text: "two" });
    await new Predict(Echo).call({ text: "two" }, { lm });
    fake.fail({ status: 401, times: 1, body: { error: { message: echo, type: "invalid_request_error", code: "invalid_api_key" } } });
    await new Predict(Echo).call({ text: "three" }, { lm }).catch((e: Error) => errors.push(e));

    // An agent whose tool fails with the key in its message (as a misbehaving client library might).
    const leaky = tool({
      name: "lookup", description: "Looks up.", input: { q: z.string() },
      call: () => {
        throw new Error(`upstream refused key ${LM_KEY}`);
      },
    });
    await new ReAct(Question, { tools: [leaky] }).call({ question: "?" }, {
      lm: new ScriptedLM([
        { thought: "Look up.", action: "lookup", toolInput: { q: "x" } },
        { thought: "Done.", action: "finish", toolInput: {} },
        { answer: "none" },
      ]),
    });

    // A recorded evaluation: rows go to the lab store. The third example's call fails with the key in
    // its message (a user's module that forwards a client library's error).
    fake.reply({ text: "a" }).reply({ text: "b" });
    class Leaky extends Module<{ text: string }, { text: string }> {
      inner = new Predict(Echo).configure((c) => { c.lm = lm; });
      async forward(inputs: { text: string }) {
        if (inputs.text === "c") throw new Error(`client rejected ${LM_KEY}`);
        return this.inner.call(inputs);
      }
    }
    await new Evaluation({ concurrency: 1, progress: false, name: "secrets" }).evaluate({
      moduleInstance: new Leaky(),
      testExamples: ["a", "b", "c"].map((t) => new FewShotExample({ input: { text: t }, output: { text: t } })),
    });
    await Instrumentation.flush();

    // The keys did travel where they belong, so their absence below means something.
    expect(fake.requests.some((r) => JSON.stringify(r.headers).includes(LM_KEY))).toBe(true);
    expect(langfuse.received[0]?.headers.authorization).toBe(`Basic ${BASIC}`);
    expect(newrelic.received[0]?.headers["api-key"]).toBe(NR_LICENSE);
    // And the run produced plenty of each kind of record.
    const spans = exporter.getFinishedSpans();
    const labRows = await allRows(labPath);
    const cacheRows = await allRows(cachePath);
    expect(events.length).toBeGreaterThan(40);
    expect(lines.length).toBeGreaterThan(40);
    expect(spans.length).toBeGreaterThan(15);
    expect(errors).toHaveLength(1);
    expect(labRows.filter((r) => r.table === "lab_runs")).toHaveLength(1);
    expect(labRows.filter((r) => r.table === "lab_rows")).toHaveLength(3);
    expect(labRows.some((r) => r.table === "lab_rows" && r.text.includes("client rejected [REDACTED]"))).toBe(true);
    expect(cacheRows.filter((r) => r.table === "lm_cache").length).toBeGreaterThanOrEqual(2);
    // The tool's error did reach the records, masked.
    expect(events.some((e) => e.name === "tool.call" && String(e.payload.error).includes("upstream refused key [REDACTED]"))).toBe(true);

    const records: [string, string][] = [
      ...events.map((e): [string, string] => [`event ${e.name}`, JSON.stringify(e)]),
      ...lines.map((l): [string, string] => ["log line", l]),
      ...spans.map((s): [string, string] => [`span ${s.name}`, JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, resource: s.resource.attributes })]),
      ...[...langfuse.received, ...newrelic.received].map((r): [string, string] => [`OTLP body ${r.path}`, r.body]),
      ...errors.map((e): [string, string] => ["error", `${e.message}\n${e.stack}`]),
      ...labRows.map((r): [string, string] => [`lab row ${r.table}`, r.text]),
      ...cacheRows.map((r): [string, string] => [`cache row ${r.table}`, r.text]),
    ];
    const leaks = records.filter(([, text]) => SECRETS.some((s) => text.includes(s))).map(([where]) => where);
    expect(leaks).toEqual([]);
  });
});
