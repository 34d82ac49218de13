// What typelm run does before the run: every model is checked before anything runs, the check has a
// time limit, and a command that cannot finish (an experiment file whose top-level await never
// settles) fails and says what it waited for instead of exiting 0 without a word.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ConfigurationError, defineExperiment, FewShotExample, LabStore, LM, Module, Predict, Signature } from "../../lib/index.js";
import { runExperiment } from "../../lib/lab/experiment/run.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/index.js";
import { offline, runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = realpathSync(mkdtempSync(join(tmpdir(), "typelm-model-check-")));
const stores: string[] = [];
afterAll(() => {
  for (const path of stores) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

function project(name: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, "node_modules"), { recursive: true });
  symlinkSync(root, join(path, "node_modules", "typelm"), "dir");
  symlinkSync(join(root, "node_modules", "zod"), join(path, "node_modules", "zod"), "dir");
  return path;
}

const EXPERIMENT = `import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";

const Triage = Signature.define({
  name: "Triage",
  description: "Route a support ticket to its team.",
  input: { ticket: z.string() },
  output: { team: z.enum(["billing", "technical"]) },
});
const ex = (id, ticket, team) => ({ id, input: { ticket }, output: { team } });
export default defineExperiment({
  name: "tickets",
  dataset: {
    train: [ex("a", "my invoice", "billing"), ex("b", "the app crashes", "technical"), ex("c", "a refund", "billing")],
    dev: [ex("d", "error 500", "technical"), ex("e", "charged twice", "billing")],
    test: [ex("f", "sync is broken", "technical"), ex("g", "my card", "billing")],
  },
  signature: Triage,
  program: ({ signature }) => new Predict(signature),
  optimizer: "simple",
  optimizerOptions: { numTrials: 1, kDemos: 1 },
});
`;

describe("typelm run with several --lm", () => {
  let fake: FakeProvider;
  beforeAll(async () => { fake = await startFakeProvider({ defaultReply: { team: "billing" } }); });
  afterAll(() => fake.close());

  it("checks every model before anything runs: the second one unreachable stops it after the first one's check alone", async () => {
    const cwd = project("two-models");
    mkdirSync(join(cwd, "experiments"));
    writeFileSync(join(cwd, "experiments/tickets.ts"), EXPERIMENT);
    const env = {
      ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-check",
      // Nothing listens on port 9: the connection is refused (and retried, then given up).
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "sk-ant-fake-check",
    };
    const r = await runBuiltCli(["run", "experiments/tickets.ts", "--lm", "openai/model-a", "--lm", "anthropic/model-b"], cwd, env);
    expect(r.stderr).toMatch(/^typelm run: The model anthropic\/model-b \(from --lm\) could not be used: anthropic request for model "model-b" failed: connection to .* failed; gave up after 4 attempts\. /m);
    expect(r.code).toBe(1);
    // model-a answered its check (one request) and nothing else: no baseline, no optimizer, no report.
    expect(fake.requests).toHaveLength(1);
    expect(r.stderr).not.toContain("baseline");
    const lab = join(cwd, ".typelm/lab.sqlite");
    stores.push(lab);
    expect(existsSync(lab) ? LabStore.open(lab).runs() : []).toEqual([]);
    expect(existsSync(join(cwd, "reports"))).toBe(false);
  }, 60000);
});

describe("a command that cannot finish fails and says what it waited for", () => {
  const cases: [string, string][] = [
    ["tla.ts", `import { defineExperiment } from "typelm";\nawait new Promise<void>(() => {});\nexport default defineExperiment({ name: "x", dataset: "x", program: () => { throw new Error("unused"); } });\n`],
    ["tla.mjs", `await new Promise(() => {});\nexport default 1;\n`],
  ];
  it.each(cases)("an experiment file whose top-level await never settles (%s)", async (file, text) => {
    const cwd = project(`tla-${file.replace(".", "-")}`);
    writeFileSync(join(cwd, file), text);
    const r = await runBuiltCli(["run", file], cwd);
    expect(r.stderr).toBe(
      `typelm run: stopped before it finished: it was waiting for the experiment file ${join(cwd, file)} to finish loading ` +
        "(its top-level await waits for a promise that nothing settles), and nothing is left that could end the wait\n",
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
  }, 60000);
});

const Triage = Signature.define({
  name: "Triage",
  description: "Route a support ticket to its team.",
  input: { ticket: z.string() },
  output: { team: z.enum(["billing", "technical"]) },
});
const example = (id: string, ticket: string, team: string) => new FewShotExample({ id, input: { ticket }, output: { team } });
const splits = {
  train: [example("a", "my invoice", "billing"), example("b", "the app crashes", "technical")],
  dev: [example("d", "error 500", "technical")],
  test: [example("f", "sync is broken", "technical"), example("g", "my card", "billing")],
};

/** A program whose call never ends and leaves nothing on the event loop: only the check's own time limit ends the wait. */
class NeverAnswers extends Module {
  predict = new Predict(Triage);
  override async forward(): Promise<Record<string, unknown>> {
    return new Promise(() => {});
  }
}

describe("the check before the run has a time limit", () => {
  let fake: FakeProvider;
  const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: { team: "billing" } });
    process.env.OPENAI_BASE_URL = fake.openaiBaseURL;
    process.env.OPENAI_API_KEY = "sk-fake-timeout";
    // The first openai call of this process loads the provider's package (1-2 s on a busy machine under
    // the test runner), which the check's 0.5 s below would count: the request never left. Load it here.
    await new LM("openai/model-a", { apiKey: "sk-fake-timeout", baseURL: fake.openaiBaseURL }).chat({ messages: [{ role: "user", content: "warm up" }] });
    fake.reset();
  });
  afterAll(async () => {
    await fake.close();
    LM.resetConfiguration();
    for (const [name, value] of [["OPENAI_BASE_URL", saved.url], ["OPENAI_API_KEY", saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  async function refusal(run: Promise<unknown>): Promise<ConfigurationError> {
    const error = await run.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }

  it("a model whose server never answers stops the run when the time is up, naming the model", async () => {
    const cwd = join(dir, "silent-server");
    mkdirSync(cwd, { recursive: true });
    stores.push(join(cwd, ".typelm/lab.sqlite"));
    // The LM's own limit (one attempt of 20 s) is far beyond the check's.
    LM.configure((policy) => { policy.httpTimeout = 20; policy.maxRetries = 0; });
    fake.hang({ times: 1 });
    const experiment = defineExperiment({ name: "silent", dataset: splits, signature: Triage, program: new Predict(Triage), optimizer: "none" });
    const started = Date.now();
    const error = await refusal(runExperiment(experiment, { lm: "openai/model-a", cwd, env: offline, modelCheckMs: 500 }));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error.message).toBe(
      'The model openai/model-a (from --lm) did not answer the check before the run within 0.5 s: the program\'s call on the first test example (id "f") had not finished. ' +
        "Check that the server is running and answers (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST) and that the program waits for nothing else, " +
        "or choose another model with --lm provider/model.",
    );
    expect(fake.requests).toHaveLength(1);
    // Nothing ran after the check.
    expect(LabStore.open(join(cwd, ".typelm/lab.sqlite")).runs()).toEqual([]);
  }, 30000);

  it("so does a program that never finishes its call (the offline stand-in as the model)", async () => {
    const cwd = join(dir, "never");
    mkdirSync(cwd, { recursive: true });
    stores.push(join(cwd, ".typelm/lab.sqlite"));
    const experiment = defineExperiment({ name: "never", dataset: splits, signature: Triage, program: new NeverAnswers(), optimizer: "none" });
    const error = await refusal(runExperiment(experiment, { cwd, env: offline, ollamaProbeMs: 200, modelCheckMs: 300 }));
    expect(error.message).toMatch(/^The model simulated\/stand-in \(from stand-in\) did not answer the check before the run within 0\.3 s: the program's call on the first test example \(id "f"\) had not finished\./);
  }, 30000);
});
