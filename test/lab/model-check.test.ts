// What typelm run does before the run: every model is checked before anything runs, the check has a
// time limit, and a command that cannot finish (an experiment file whose top-level await never
// settles) fails and says what it waited for instead of exiting 0 without a word.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
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
