import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LM, Predict, defineExperiment, type LMRequest, type LMResponse } from "../../lib/index.js";
import { runAndReport } from "../../lib/lab/experiment/reproduce.js";
import { isCredentialName, recordedOptions } from "../../lib/lab/experiment/recorded-options.js";
import { SimulatedLM } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-results-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = "sk-proj-Zq81vXw0PqLm4RtY7uNb2Hc5";
const OTHER_KEY = "sk-proj-Second9Kd73hQ2wLx0aVb";
const BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig";
/** Registered by an LM built with it, and not key-shaped: only the registry can know it is a secret. */
const REGISTERED = "plain-looking-registered-value-42";

const SIGNATURE = {
  name: "Mood", description: "Say whether a line is happy or sad.",
  input: { line: { type: "string" } }, output: { label: { type: "enum", values: ["happy", "sad"] } },
};
const LINES: [string, string][] = [
  ["the sun is warm", "happy"], ["we laughed all day", "happy"], ["a bright morning", "happy"], ["the dog wags", "happy"],
  ["the rain will not stop", "sad"], ["she left at night", "sad"], ["an empty house", "sad"], ["the letter never came", "sad"],
];
function dataset(folder: string): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "signature.json"), JSON.stringify(SIGNATURE));
  const jsonl = (rows: [string, string][], prefix: string) => rows.map(([line, label], i) => JSON.stringify({ id: `${prefix}-${i}`, line, label })).join("\n") + "\n";
  writeFileSync(join(folder, "train.jsonl"), jsonl([...LINES, ...LINES.map(([l, x]) => [`${l} again`, x] as [string, string])], "train"));
  writeFileSync(join(folder, "dev.jsonl"), jsonl(LINES.slice(2, 6), "dev"));
  writeFileSync(join(folder, "test.jsonl"), jsonl(LINES.slice(0, 4).concat(LINES.slice(5)), "test"));
}

/** A user's own model, written to the documented interface (chat and the settings): it keeps its key in a field. */
class MyModel {
  readonly apiKey = KEY;
  readonly endpoint = "https://models.example.com/v1";
  readonly schemaFormat = "json" as const;
  readonly dataFormat = "json" as const;
  readonly structuredOutputs = false;
  readonly temperature = 0;
  readonly maxTokens = undefined;
  readonly #inner = new SimulatedLM({ model: "mine" });
  supportsStructuredOutputs(): boolean {
    return false;
  }
  chat(request: LMRequest): Promise<LMResponse> {
    return this.#inner.chat(request);
  }
}

describe("results.json never holds a key from the experiment's optimizerOptions", () => {
  it("a user's model object holding apiKey, an option holding a key and a registered secret: none reach the files on disk", async () => {
    new LM("openai/gpt-4o-mini", { apiKey: REGISTERED });
    const cwd = join(dir, "probe");
    dataset(join(cwd, "data"));
    const definition = defineExperiment({
      name: "keyed",
      dataset: "./data",
      program: ({ signature }) => new Predict(signature),
      optimizer: "mipro",
      optimizerOptions: {
        mode: "light", kDemos: 1, numCandidates: 2, numTrials: 2,
        // Unknown options are refused when the experiment is defined, so a key can ride in only on a
        // known option holding an object: the user's own model.
        promptModel: new MyModel() as never,
      },
    });
    const outcome = await runAndReport({ definition, dir: cwd, file: join(cwd, "keyed.ts"), sha256: "0".repeat(64) }, {
      cwd, env: { OLLAMA_HOST: "http://127.0.0.1:9" }, ollamaProbeMs: 50,
    });
    const json = readFileSync(join(outcome.dir, "results.json"), "utf8");
    const md = readFileSync(join(outcome.dir, "report.md"), "utf8");
    for (const secret of [KEY, OTHER_KEY, BEARER, REGISTERED, "eyJhbGciOiJIUzI1NiJ9"]) {
      expect(json).not.toContain(secret);
      expect(md).not.toContain(secret);
    }
    // What is recorded instead: the model by what it is, the plain options as given, credentials masked.
    expect(JSON.parse(json).manifest.options.optimizerOptions).toEqual({
      kDemos: 1, mode: "light", numCandidates: 2, numTrials: 2, promptModel: "[model MyModel]",
    });
  }, 60_000);
});

describe("results.json and report.md mask registered secrets wherever they appear", () => {
  it("a registered secret in the task's description (the program's instruction) and in the summary is masked, the JSON still valid", async () => {
    new LM("openai/gpt-4o-mini", { apiKey: REGISTERED });
    const cwd = join(dir, "described");
    dataset(join(cwd, "data"));
    writeFileSync(join(cwd, "data", "signature.json"), JSON.stringify({ ...SIGNATURE, description: `Say whether a line is happy or sad (${REGISTERED}).` }));
    const definition = defineExperiment({
      name: "described", dataset: "./data", program: ({ signature }) => new Predict(signature), optimizer: "none",
      summary: `A summary that quotes ${REGISTERED} by mistake.`,
    });
    const outcome = await runAndReport({ definition, dir: cwd, file: join(cwd, "described.ts"), sha256: "0".repeat(64) }, {
      cwd, env: { OLLAMA_HOST: "http://127.0.0.1:9" }, ollamaProbeMs: 50,
    });
    const json = readFileSync(join(outcome.dir, "results.json"), "utf8");
    const md = readFileSync(join(outcome.dir, "report.md"), "utf8");
    expect(JSON.parse(json).program.self.instruction).toBe("Say whether a line is happy or sad ([REDACTED]).");
    expect(md).toContain("A summary that quotes [REDACTED] by mistake.");
    expect(json + md).not.toContain(REGISTERED);
  }, 60_000);
});

describe("recordedOptions", () => {
  it("records a model by its id (or provider/model), never its fields", () => {
    const literal = { id: "mine/m1", apiKey: KEY, chat: () => undefined };
    const byParts = { provider: "mine", model: "m2", secretHeader: "x", call: () => undefined };
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-abcdefgh12345678" });
    expect(recordedOptions({ a: literal, b: byParts, c: lm })).toEqual({ a: "[model mine/m1]", b: "[model mine/m2]", c: "[model openai/gpt-4o-mini]" });
  });

  it("records class instances by class name, functions by name, plain data as it is", () => {
    class Holder { constructor(readonly token = KEY) {} }
    function myMetric(): number { return 1; }
    const recorded = recordedOptions({ holder: new Holder(), metric: myMetric, list: [1, "two", { three: 3 }], when: new Date(0), map: new Map([["k", KEY]]) });
    expect(recorded).toEqual({ holder: "[object Holder]", metric: "[function myMetric]", list: [1, "two", { three: 3 }], when: "1970-01-01T00:00:00.000Z", map: "[object Map]" });
  });

  it("masks fields named like credentials, whatever they hold, and keeps counts such as maxTokens", () => {
    for (const name of ["apiKey", "api_key", "x-api-key", "key", "token", "accessToken", "clientSecret", "password", "Authorization", "cookie", "credentials", "privateKey"]) {
      expect([name, isCredentialName(name)]).toEqual([name, true]);
    }
    for (const name of ["maxTokens", "kDemos", "mode", "numCandidates", "monkey", "seed", "keyboard"]) {
      expect([name, isCredentialName(name)]).toEqual([name, false]);
    }
    expect(recordedOptions({ auth: { user: "u", pass: "p" }, maxTokens: 20 })).toEqual({ auth: "[REDACTED]", maxTokens: 20 });
  });

  it("a structure that contains itself is cut rather than followed", () => {
    const loop: Record<string, unknown> = { name: "loop" };
    loop.self = loop;
    expect(recordedOptions(loop)).toEqual({ name: "loop", self: "[Circular]" });
  });
});
