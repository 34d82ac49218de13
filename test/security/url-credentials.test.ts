import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  Evaluation, FewShotExample, Instrumentation, LM, Module, Predict, Signature, resetConfiguration, type TypelmEvent,
} from "../../lib/index.js";
import { maskUrlCredentials, redact, shownUrl } from "../../lib/instrument/redact.js";
import { endpointId } from "../../lib/lm/cache.js";
import { captureLogs } from "../helpers/capture-logs.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/index.js";

// Short on purpose: a value under 8 characters is never a registered secret, so only masking the
// URL's credentials where it is shown keeps these out.
const USER = "admin-u7";
const PASSWORD = "pw-7Qx";
const QUERY_VALUE = "qv-91Zk";
const CREDENTIALS = [PASSWORD, QUERY_VALUE, `${USER}:`];

const dir = mkdtempSync(join(tmpdir(), "typelm-security-url-"));
const labPath = join(dir, "lab.sqlite");
const savedHost = process.env["OLLAMA_HOST"];
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterEach(() => {
  resetConfiguration();
  LM.resetConfiguration();
  Instrumentation.reset();
  if (savedHost === undefined) delete process.env["OLLAMA_HOST"];
  else process.env["OLLAMA_HOST"] = savedHost;
});
afterAll(async () => {
  await fake.close();
  closeStoreSync(labPath);
  rmSync(dir, { recursive: true, force: true });
});

/** Every text column of every row of every table of a store file. */
function allText(path: string): string[] {
  const db = openStoreSync(path);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  return tables.flatMap(({ name }) =>
    (db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[])
      .flatMap((row) => Object.values(row).filter((v): v is string => typeof v === "string")));
}

function leaks(records: [string, string][]): string[] {
  return records.filter(([, text]) => CREDENTIALS.some((c) => text.includes(c))).map(([where, text]) => `${where}: ${text}`);
}

/** Turns on the text and JSON loggers' worth of lines, every event and the lab store. */
function capture(): { lines: string[]; events: TypelmEvent[] } {
  const { lines, events } = captureLogs("text", (c) => { c.lab = { path: labPath }; });
  LM.configure((c) => {
    c.retryDelay = 0.01;
    c.maxRetries = 1;
    c.httpTimeout = 0.5;
  });
  return { lines, events };
}

const Echo = Signature.define({ name: "Echo", input: { text: z.string() }, output: { text: z.string() } });
const port = (): string => new URL(fake.url).port;

describe("credentials in a URL are masked wherever the URL is shown", () => {
  it("shows scheme, host, port and path only", () => {
    expect(shownUrl(`http://${USER}:${PASSWORD}@host.example:11434/api?key=${QUERY_VALUE}&x=1#t=${QUERY_VALUE}`)).toBe("http://host.example:11434/api");
    expect(shownUrl(`${USER}:${PASSWORD}@10.0.0.5:11434`)).toBe("10.0.0.5:11434");
    expect(shownUrl("http://127.0.0.1:11434")).toBe("http://127.0.0.1:11434");
    expect(maskUrlCredentials(`fetch https://${USER}:${PASSWORD}@h.example/v1/chat?api-key=${QUERY_VALUE} failed; see http://docs.example/x.`))
      .toBe("fetch https://h.example/v1/chat failed; see http://docs.example/x.");
    // The cache key's endpoint uses the same helper: no credential, even without a scheme.
    for (const url of [`http://${USER}:${PASSWORD}@h:1/v1`, `https://h/v1?key=${QUERY_VALUE}`, `${USER}:${PASSWORD}@127.0.0.1:11434`]) {
      expect(leaks([["endpointId", endpointId(url)]])).toEqual([]);
    }
    expect(endpointId("http://127.0.0.1:11434/")).toBe("http://127.0.0.1:11434");
    // Errors in event payloads are masked too, wherever they sit.
    const cleaned = redact({ error: `GET http://${USER}:${PASSWORD}@h/`, nested: [{ error: new Error(`to https://h/?token=${QUERY_VALUE}`) }] });
    expect(cleaned).toEqual({ error: "GET http://h/", nested: [{ error: "Error: to https://h/" }] });
  });

  it("keeps an Ollama baseURL's password out of the LMError, log lines, events and stored rows", async () => {
    const { lines, events } = capture();
    const lm = new LM("ollama/llama3.2:3b", { baseURL: `http://${USER}:${PASSWORD}@127.0.0.1:${port()}` });
    const errors: Error[] = [];
    await lm.chat({ messages: [{ role: "user", content: "hi" }] }).catch((e: Error) => errors.push(e));
    // The same LM inside a recorded evaluation: its rows keep the error.
    await new Evaluation({ concurrency: 1, progress: false, name: "url-credentials" }).evaluate({
      moduleInstance: new Predict(Echo).configure((c) => { c.lm = lm; }),
      testExamples: [new FewShotExample({ input: { text: "a" }, output: { text: "a" } })],
    });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.name).toBe("LMError");
    expect(errors[0]!.message).toContain(`127.0.0.1:${port()}`);
    const rows = allText(labPath);
    expect(rows.some((t) => t.includes("LMError") || t.includes("request error"))).toBe(true);
    expect(lines.length).toBeGreaterThan(3);
    expect(leaks([
      ...errors.map((e): [string, string] => ["error", `${e.message}\n${e.stack}`]),
      ...lines.map((l): [string, string] => ["log line", l]),
      ...events.map((e): [string, string] => [`event ${e.name}`, JSON.stringify(e)]),
      ...rows.map((r): [string, string] => ["lab row", r]),
    ])).toEqual([]);
  });

  it("keeps OLLAMA_HOST's password out too, and a query credential of an OpenAI-compatible baseURL", async () => {
    const { lines, events } = capture();
    process.env["OLLAMA_HOST"] = `http://${USER}:${PASSWORD}@127.0.0.1:${port()}`;
    const errors: Error[] = [];
    await new LM("ollama/llama3.2:3b").chat({ messages: [{ role: "user", content: "hi" }] }).catch((e: Error) => errors.push(e));
    const openai = new LM("openai/gpt-4o-mini", { apiKey: "sk-url-test-0123456789", baseURL: `http://${USER}:${PASSWORD}@127.0.0.1:${port()}/v1?key=${QUERY_VALUE}` });
    await openai.chat({ messages: [{ role: "user", content: "hi" }] }).catch((e: Error) => errors.push(e));
    // A user's module that fails with a URL in its message: the row's error is masked as well.
    class Fetcher extends Module<{ text: string }, { text: string }> {
      async forward(): Promise<{ text: string }> {
        throw new Error(`GET https://${USER}:${PASSWORD}@data.example/rows?token=${QUERY_VALUE} refused`);
      }
    }
    await new Evaluation({ concurrency: 1, progress: false, name: "module-url" }).evaluate({
      moduleInstance: new Fetcher(),
      testExamples: [new FewShotExample({ input: { text: "a" }, output: { text: "a" } })],
    });
    expect(errors.map((e) => e.name)).toEqual(["LMError", "LMError"]);
    const rows = allText(labPath);
    expect(rows.some((t) => t.includes("GET https://data.example/rows refused"))).toBe(true);
    expect(leaks([
      ...errors.map((e): [string, string] => ["error", `${e.message}\n${e.stack}`]),
      ...lines.map((l): [string, string] => ["log line", l]),
      ...events.map((e): [string, string] => [`event ${e.name}`, JSON.stringify(e)]),
      ...rows.map((r): [string, string] => ["lab row", r]),
    ])).toEqual([]);
  });
});
