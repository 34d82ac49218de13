import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { resetConfiguration } from "../../lib/config.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { ConfigurationError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";
import { closeStore, openStore } from "../../lib/store/db.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";
import { captureLogLines, PROVIDER_NAMES, TEST_KEY, type ProviderName } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-redact-"));
const path = join(dir, "run.sqlite");
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
  await closeStore(path);
  rmSync(dir, { recursive: true, force: true });
  resetConfiguration();
  LM.resetConfiguration();
  Instrumentation.reset();
});

/** Error bodies that echo the key back, as real servers sometimes do ("Incorrect API key provided: …"). */
function echoingErrorBody(provider: ProviderName, status: number): unknown {
  const message = `Incorrect API key provided: ${TEST_KEY}. Header was "Authorization: Bearer ${TEST_KEY}" (HTTP ${status})`;
  if (provider === "anthropic") return { type: "error", error: { type: "authentication_error", message } };
  if (provider === "ollama") return { error: message };
  return { error: { message, type: "invalid_request_error", code: "invalid_api_key" } };
}

describe("the API key never leaves the request headers", () => {
  it("is absent from every log line, event payload, error message and cache row of a run", async () => {
    const lines = captureLogLines();
    const events: TypelmEvent[] = [];
    Instrumentation.subscribe(/.*/, (e) => events.push(e));
    LM.configure((c) => {
      c.retryDelay = 0.01;
      // A generous timeout for every call but the hanging one: at 0.3 s, a loaded machine's slow reply
      // timed out, and its late request took the next call's scripted failure.
      c.httpTimeout = 30;
      c.maxRetries = 1;
    });
    const errors: unknown[] = [];
    const messages = [{ role: "system" as const, content: "Be brief." }, { role: "user" as const, content: "hi" }];

    for (const provider of PROVIDER_NAMES) {
      // Ollama gets a key too, as for hosted Ollama, so its Authorization header is covered.
      const lm = new LM(`${provider}/${provider === "ollama" ? "llama3.2:3b" : provider === "openai" ? "gpt-4o-mini" : "claude-3-5-haiku"}`, {
        apiKey: TEST_KEY, baseURL: provider === "openai" ? fake.openaiBaseURL : fake.url, cache: { path },
      });
      fake.reply("plain answer");
      await lm.chat({ messages });
      fake.reply({ answer: "structured" });
      await lm.chat({ messages: [...messages, { role: "user", content: "again" }], responseSchema: { name: "A", schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] } } });
      await lm.chat({ messages }); // cache hit
      for (const status of [401, 429, 500]) {
        fake.fail({ status, times: status === 401 ? 1 : 2, retryAfterMs: 0, body: echoingErrorBody(provider, status) });
        await lm.chat({ messages: [{ role: "user", content: `fail ${status}` }] }).catch((e: unknown) => errors.push(e));
      }
      fake.hang({ times: 2 });
      LM.configure((c) => { c.httpTimeout = 0.3; });
      await lm.chat({ messages: [{ role: "user", content: "hang" }] }).catch((e: unknown) => errors.push(e));
      LM.configure((c) => { c.httpTimeout = 30; });
      fake.dropConnection({ times: 2 });
      await lm.chat({ messages: [{ role: "user", content: "drop" }] }).catch((e: unknown) => errors.push(e));
      expect(inspect(lm, { depth: 10, showHidden: true })).not.toContain(TEST_KEY);
      expect(JSON.stringify(lm)).not.toContain(TEST_KEY);
    }

    // The key did go to the server (so the test would notice if it leaked from there).
    expect(fake.requests.some((r) => JSON.stringify(r.headers).includes(TEST_KEY))).toBe(true);
    expect(errors).toHaveLength(3 * 5);
    expect(lines.length).toBeGreaterThan(50);
    expect(events.length).toBeGreaterThan(50);

    for (const line of lines) expect(line).not.toContain(TEST_KEY);
    for (const event of events) expect(JSON.stringify(event)).not.toContain(TEST_KEY);
    for (const error of errors) {
      const e = error as Error;
      expect(e.name).toBe("LMError");
      expect(e.message).not.toContain(TEST_KEY);
      expect(String(e.stack)).not.toContain(TEST_KEY);
      expect(inspect(e, { depth: 10 })).not.toContain(TEST_KEY);
      expect(JSON.stringify(e)).not.toContain(TEST_KEY);
    }
    // The server's echo of the key was masked, and the message still says what happened.
    expect((errors[0] as Error).message).toContain("HTTP 401");
    expect((errors[0] as Error).message).toContain("[REDACTED]");

    const db = await openStore(path);
    const rows = db.prepare("SELECT * FROM lm_cache").all();
    expect(rows.length).toBe(3 * 2);
    for (const row of rows) expect(JSON.stringify(row)).not.toContain(TEST_KEY);
    // Nothing else in the file either (every table, every column).
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    for (const { name } of tables) {
      expect(JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all())).not.toContain(TEST_KEY);
    }
  });

  it("keeps a key out of configuration errors built from what the caller passed", () => {
    const envKey = "sk-env-SECRET-654321";
    const saved = process.env["OPENAI_API_KEY"];
    process.env["OPENAI_API_KEY"] = envKey;
    try {
      // Arguments swapped, a key pasted where the model goes, an env key passed as the id: each
      // message echoes the id, and the key inside it must come out masked.
      const attempts: [() => unknown, RegExp, string][] = [
        [() => new LM(TEST_KEY, { apiKey: TEST_KEY }), /provider or model part is missing/, TEST_KEY],
        [() => new LM(`nope/${TEST_KEY}`, { apiKey: TEST_KEY }), /unknown provider "nope"/, TEST_KEY],
        [() => new LM(process.env["OPENAI_API_KEY"]!), /provider or model part is missing/, envKey],
      ];
      for (const [build, why, key] of attempts) {
        let error: unknown;
        try {
          build();
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConfigurationError);
        const message = (error as Error).message;
        expect(message).toMatch(why);
        expect(message).toContain("[REDACTED]");
        expect(message).not.toContain(key);
        expect(String((error as Error).stack)).not.toContain(key);
      }
    } finally {
      if (saved === undefined) delete process.env["OPENAI_API_KEY"];
      else process.env["OPENAI_API_KEY"] = saved;
    }
  });
});
