import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Instrumentation, LM, Predict, Signature, configure, resetConfiguration } from "../../lib/index.js";
import { redact, redactString, registerSecret } from "../../lib/instrument/redact.js";
import { captureLogs } from "../helpers/capture-logs.js";
import { classifyFailure } from "../../lib/lm/failure.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-security-redact-"));
const paths: string[] = [];
function file(name: string): string {
  const path = join(dir, name);
  paths.push(path);
  return path;
}
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
  for (const path of paths) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
  resetConfiguration();
  LM.resetConfiguration();
  Instrumentation.reset();
});


/** The forms a secret takes inside JSON text: itself, escaped once (a stored string), escaped twice (JSON of a row). */
function forms(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [...new Set([secret, once, twice])];
}

/** Every text column of every row of every table of a store file. */
function allText(path: string): string[] {
  const db = openStoreSync(path);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  return tables.flatMap(({ name }) =>
    (db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[])
      .flatMap((row) => Object.values(row).filter((v): v is string => typeof v === "string")));
}

function row(index: number, overrides: Partial<EvaluationRow>): EvaluationRow {
  return {
    index, exampleId: `e${index}`, inputs: {}, expected: {}, prediction: null, scores: {}, error: null,
    durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0, ...overrides,
  };
}

const Echo = Signature.define({ name: "Echo", input: { text: z.string(), n: z.number() }, output: { text: z.string() } });

describe("a value shorter than 8 characters is never treated as a secret", () => {
  it("registerSecret ignores it, so ordinary text that contains it is left alone", () => {
    registerSecret("test");
    registerSecret("1234");
    registerSecret("seven77");
    expect(redactString("unit test of the latest build, 1234 rows, seven77")).toBe("unit test of the latest build, 1234 rows, seven77");
    expect(redact({ note: "latest test", n: 1234, s: "1234" })).toEqual({ note: "latest test", n: 1234, s: "1234" });
  });

  it("an evaluation run with apiKey \"test\" and \"1234\" stores its inputs unchanged and reads back (the README's fake-provider example)", async () => {
    const path = file("short-key.sqlite");
    configure((c) => { c.lab = { path }; });
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "test", baseURL: fake.openaiBaseURL });
    new LM("openai/gpt-4o-mini", { apiKey: "1234", baseURL: fake.openaiBaseURL });
    fake.reply({ text: "unit test of the latest build" }).reply({ text: "test 1234" });
    const report = await new Evaluation({ concurrency: 1, progress: false, name: "short-key" }).evaluate({
      moduleInstance: new Predict(Echo).configure((c) => { c.lm = lm; }),
      testExamples: [
        new FewShotExample({ input: { text: "unit test of the latest build", n: 1234 }, output: { text: "unit test of the latest build" } }),
        new FewShotExample({ input: { text: "test 1234", n: 12345 }, output: { text: "test 1234" } }),
      ],
    });
    const lab = LabStore.open(path);
    const [summary] = lab.runs();
    expect(summary?.name).toBe("short-key");
    // Before the fix this threw SyntaxError: the stored number 1234 had become the bare word [REDACTED].
    const run = lab.run(summary!.id);
    expect(run?.kind).toBe("evaluation");
    const rows = run?.kind === "evaluation" ? run.rows : [];
    expect(rows.map((r) => r.inputs)).toEqual([
      { text: "unit test of the latest build", n: 1234 },
      { text: "test 1234", n: 12345 },
    ]);
    expect(rows.map((r) => r.prediction)).toEqual([{ text: "unit test of the latest build" }, { text: "test 1234" }]);
    expect(report.results.map((r) => r.error ?? null)).toEqual([null, null]);
    expect(allText(path).some((t) => t.includes("[REDACTED]"))).toBe(false);
  });
});

describe("redaction works on decoded values", () => {
  // 8+ characters with a quote and a backslash: JSON text holds it as sk-\"quoted\\key-0123.
  const SECRET = 'sk-"quoted\\key-0123';
  // All digits: a stored number with the same digits is a number, not a secret string.
  const DIGITS = "9876543210";

  it("masks a secret with \" and \\ in stored rows however JSON escaped it, and keeps every stored value valid JSON", () => {
    new LM("openai/gpt-4o-mini", { apiKey: SECRET, baseURL: fake.openaiBaseURL });
    registerSecret(DIGITS);
    const path = file("escaped.sqlite");
    const lab = LabStore.open(path);
    const id = lab.startRun({ kind: "evaluation", name: "escaped", config: { note: `key ${SECRET}`, seed: 9876543210 } });
    lab.recordExample(id, row(0, {
      inputs: { text: `my key is ${SECRET}`, [`field ${SECRET}`]: 1, n: 9876543210, digits: `pin ${DIGITS}` },
      expected: { text: "fine" }, prediction: { text: `echo ${SECRET}` }, scores: { accuracy: 1 }, error: `refused ${SECRET}`,
    }));
    lab.finishRun(id, { status: "completed", score: 1, summary: { last: SECRET }, error: null });

    for (const text of allText(path)) for (const form of forms(SECRET)) expect(text).not.toContain(form);
    const run = lab.run(id);
    const stored = run?.kind === "evaluation" ? run.rows[0] : undefined;
    expect(stored?.inputs).toEqual({ text: "my key is [REDACTED]", "field [REDACTED]": 1, n: 9876543210, digits: "pin [REDACTED]" });
    expect(stored?.prediction).toEqual({ text: "echo [REDACTED]" });
    expect(stored?.error).toBe("refused [REDACTED]");
    expect(run?.config).toEqual({ note: "key [REDACTED]", seed: 9876543210 });
    expect(run?.summary).toEqual({ last: "[REDACTED]" });
  });

  it("masks a secret a server echoes JSON-escaped inside its error text, in the LMError, events and log lines", async () => {
    const { lines, events } = captureLogs("json");
    const lm = new LM("openai/gpt-4o-mini", { apiKey: SECRET, baseURL: fake.openaiBaseURL });
    // The server quotes the request's JSON back in its message, so the key arrives escaped once.
    const echoed = `bad request body: {"api_key": ${JSON.stringify(SECRET)}}`;
    fake.fail({ status: 400, body: { error: { message: echoed, type: "invalid_request_error" } } });
    const error = await lm.chat({ messages: [{ role: "user", content: "hi" }] }).then(() => undefined, (e: unknown) => e as Error);
    expect(error?.name).toBe("LMError");
    expect(error?.message).toContain("bad request body");
    expect(error?.message).toContain("[REDACTED]");
    // The key did reach the server, so its absence below means something.
    expect(fake.requests.some((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    expect(lines.length).toBeGreaterThan(0);
    const texts = [error!.message, String(error!.stack), ...lines, ...events.map((e) => JSON.stringify(e))];
    for (const text of texts) for (const form of forms(SECRET)) expect(text).not.toContain(form);
    // The same through the classifier alone, with the key percent-encoded as in a query string.
    const failure = classifyFailure(new Error(`GET /v1?key=${encodeURIComponent(SECRET)} and ${JSON.stringify(SECRET)}`), false);
    expect(failure.message).not.toContain(encodeURIComponent(SECRET));
    for (const form of forms(SECRET)) expect(failure.message).not.toContain(form);
  });

  it("keeps masking credential-named fields in events", () => {
    expect(redact({ headers: { Authorization: "Bearer abc", "x-api-key": "k" }, password: "pw", token: null })).toEqual({
      headers: { Authorization: "[REDACTED]", "x-api-key": "[REDACTED]" }, password: "[REDACTED]", token: null,
    });
  });
});

describe("the 8-character boundary: a registered secret of 8 characters is masked, one of 7 is not", () => {
  // Registered by hand; neither is part of the other.
  const SEVEN = "k7Qz4Wm";
  const EIGHT = "k8Rx5Vn2";

  it("holds for redact() and redactString() on the exact lengths", () => {
    expect([SEVEN.length, EIGHT.length]).toEqual([7, 8]);
    registerSecret(SEVEN);
    registerSecret(EIGHT);
    expect(redactString(`a ${SEVEN} b ${EIGHT} c`)).toBe(`a ${SEVEN} b [REDACTED] c`);
    expect(redact({ note: `${SEVEN}/${EIGHT}`, [EIGHT]: SEVEN })).toEqual({ note: `${SEVEN}/[REDACTED]`, "[REDACTED]": SEVEN });
  });

  it("holds in an LM's errors, the events and the log lines of a failed call, and in stored records", async () => {
    // Registered only as the LMs' apiKey (not by the test above), so the LM's own registration is what is tested.
    const SEVEN_KEY = "s7Lp3Ty";
    const EIGHT_KEY = "s8Mq4Uz9";
    const { lines, events, off } = captureLogs("json");
    /** The error, events and log lines of one call whose server echoes the key (and the prompt quoting it). */
    const failedCall = async (key: string) => {
      const [l0, e0] = [lines.length, events.length];
      const lm = new LM("openai/gpt-4o-mini", { apiKey: key, baseURL: fake.openaiBaseURL });
      fake.fail({ status: 400, body: { error: { message: `Incorrect API key provided: ${key}`, type: "invalid_request_error" } } });
      const error = await lm.chat({ messages: [{ role: "user", content: `my key is ${key}` }] }).then(() => undefined, (e: unknown) => e as Error);
      expect(error?.name).toBe("LMError");
      expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${key}`);
      return { error: error!, lines: lines.slice(l0), events: events.slice(e0).map((e) => JSON.stringify(e)) };
    };
    try {
      const seven = await failedCall(SEVEN_KEY);
      // Each channel does carry the server's text: a 7-character key shows in it as it was.
      expect(seven.error.message).toContain(`Incorrect API key provided: ${SEVEN_KEY}`);
      expect(seven.lines.some((l) => l.includes(SEVEN_KEY))).toBe(true);
      expect(seven.events.some((e) => e.includes(`Incorrect API key provided: ${SEVEN_KEY}`))).toBe(true);
      for (const text of [seven.error.message, ...seven.lines, ...seven.events]) expect(text).not.toContain("provided: [REDACTED]");

      const eight = await failedCall(EIGHT_KEY);
      expect(eight.error.message).toContain("Incorrect API key provided: [REDACTED]");
      expect(eight.lines.some((l) => l.includes("[REDACTED]"))).toBe(true);
      expect(eight.events.some((e) => e.includes("Incorrect API key provided: [REDACTED]"))).toBe(true);
      for (const text of [eight.error.message, String(eight.error.stack), ...eight.lines, ...eight.events]) expect(text).not.toContain(EIGHT_KEY);
    } finally {
      off();
    }

    const lab = LabStore.open(file("boundary.sqlite"));
    const id = lab.startRun({ kind: "evaluation", name: "boundary", config: {} });
    lab.recordExample(id, row(0, { inputs: { seven: SEVEN_KEY, eight: EIGHT_KEY }, error: `refused ${SEVEN_KEY} and ${EIGHT_KEY}` }));
    const run = lab.run(id);
    const stored = run?.kind === "evaluation" ? run.rows[0] : undefined;
    expect(stored?.inputs).toEqual({ seven: SEVEN_KEY, eight: "[REDACTED]" });
    expect(stored?.error).toBe(`refused ${SEVEN_KEY} and [REDACTED]`);
  });
});
