// An experiment is checked whole before any model call: metric names, labelField, the optimizer's
// options (names and values). Each mistake is one sentence naming what is valid, and the provider
// receives nothing.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { defineExperiment, Predict, Signature, ValidationError } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/index.js";
import { offline, runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "typelm-checks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const Triage = Signature.define({
  name: "Triage",
  description: "Route a support ticket to its team.",
  input: { ticket: z.string() },
  output: { team: z.enum(["billing", "technical", "account"]) },
});
const base = { name: "tickets", dataset: "../data/tickets", signature: Triage, program: new Predict(Triage) };

/** defineExperiment's ValidationError for `config` (fails the test when it does not throw one). */
function refusal(config: unknown): ValidationError {
  try {
    defineExperiment(config as Parameters<typeof defineExperiment>[0]);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("defineExperiment accepted it");
}

describe("defineExperiment checks what it is given", () => {
  it("an unknown metric name is an error with the nearest built-in name and all of them", () => {
    const e = refusal({ ...base, metrics: ["acuracy", "f1_score"] });
    expect(e.message).toBe(
      'experiment "tickets": unknown metric "acuracy" at metrics[0] (did you mean "accuracy"?); the built-in metrics are ' +
        '"accuracy", "f1_score", "exact_match", "token_f1", or give a function (example, prediction) => score in [0, 1] or a Judge',
    );
    expect(e.field).toBe("metrics[0]");
    expect(refusal({ ...base, metrics: ["accuracy", "F1-Score"] }).message).toContain('unknown metric "F1-Score" at metrics[1] (did you mean "f1_score"?)');
    expect(refusal({ ...base, metrics: ["token_f1", "exactmatch"] }).message).toContain('did you mean "exact_match"?');
    // Nothing near: no suggestion, still the list.
    const far = refusal({ ...base, metrics: ["bleu"] }).message;
    expect(far).toContain('unknown metric "bleu" at metrics[0]; the built-in metrics are "accuracy"');
    expect(far).not.toContain("did you mean");
    expect(refusal({ ...base, metrics: [42] }).message).toContain("unknown metric 42 at metrics[0]; the built-in");
  });

  it("labelField must be an output field of the signature", () => {
    const e = refusal({ ...base, labelField: "tem" });
    expect(e.message).toBe('experiment "tickets": labelField "tem" is not an output field of the signature Triage (did you mean "team"?); its output fields: team');
    expect(e.field).toBe("labelField");
    // An input field is not an output field.
    expect(refusal({ ...base, labelField: "ticket" }).message).toContain('labelField "ticket" is not an output field of the signature Triage; its output fields: team');
    expect(refusal({ ...base, labelField: 3 }).message).toContain('"labelField" must be the name of an output field; received 3');
    expect(() => defineExperiment({ ...base, labelField: "team" })).not.toThrow();
  });

  it("an unknown optimizer option is an error naming the optimizer's options, for each optimizer", () => {
    const mipro = refusal({ ...base, optimizer: "mipro", optimizerOptions: { kDemo: 2 } });
    expect(mipro.message).toBe(
      'experiment "tickets": unknown optimizerOptions key "kDemo" (did you mean "kDemos"?): MIPROv2, the "mipro" optimizer, takes ' +
        "metric, kDemos, mode, numCandidates, numTrials, minibatchSize, validationSize, fullEvalEvery, seed, promptModel, metricThreshold, " +
        "proposalTemperature, concurrency, progress, maxCost, memo, exampleTimeout, batch",
    );
    expect(mipro.field).toBe("optimizerOptions.kDemo");
    // The default optimizer is MIPROv2.
    expect(refusal({ ...base, optimizerOptions: { numTrial: 3 } }).message).toContain('unknown optimizerOptions key "numTrial" (did you mean "numTrials"?): MIPROv2, the "mipro" optimizer, takes');
    // GEPA has no demos; SimpleOptimizer no mode.
    const gepa = refusal({ ...base, optimizer: "gepa", optimizerOptions: { kDemos: 2 } }).message;
    expect(gepa).toContain('unknown optimizerOptions key "kDemos": GEPA, the "gepa" optimizer, takes metric, mode, maxMetricCalls, reflectionLM,');
    expect(refusal({ ...base, optimizer: "simple", optimizerOptions: { mode: "light" } }).message)
      .toContain('unknown optimizerOptions key "mode": SimpleOptimizer, the "simple" optimizer, takes metric, seed, numTrials, kDemos, metricThreshold, instructions,');
    // Every documented option of each is accepted.
    expect(() => defineExperiment({ ...base, optimizer: "gepa", optimizerOptions: { maxMetricCalls: 20, useMerge: false, candidateSelection: "best" } })).not.toThrow();
    expect(() => defineExperiment({ ...base, optimizer: "simple", optimizerOptions: { numTrials: 2, instructions: ["Be brief."], kDemos: 1 } })).not.toThrow();
  });

  it('optimizerOptions with "none" or an optimizer function are an error, not ignored', () => {
    expect(refusal({ ...base, optimizer: "none", optimizerOptions: { kDemos: 2 } }).message)
      .toContain('"optimizerOptions" are the options of a named optimizer ("mipro", "gepa", "simple"); with optimizer "none" nothing would read them: remove them');
    expect(refusal({ ...base, optimizer: () => ({ compile: async () => base.program }), optimizerOptions: { kDemos: 2 } }).message)
      .toContain("an optimizer function makes its own optimizer: give them to it there");
    expect(refusal({ ...base, optimizerOptions: ["kDemos"] }).message).toContain('"optimizerOptions" must be an object; received a list');
  });

  it("an unknown optimizer name gets a suggestion too", () => {
    expect(refusal({ ...base, optimizer: "gepaa" }).message).toContain('unknown optimizer "gepaa" (did you mean "gepa"?); the known ones are');
  });
});

const TEAMS = ["billing", "technical", "account"] as const;
/** 15 tickets, 5 per team, with an id so the 60/20/20 split is the same every run. */
function ticketsCsv(): string {
  const rows = ["id,ticket,team"];
  TEAMS.forEach((team, t) => {
    for (let i = 0; i < 5; i++) rows.push(`t${t}${i},about ${team} number ${i},${team}`);
  });
  return rows.join("\n") + "\n";
}

/** An experiment file: the signature comes from the dataset folder's signature.json; `extra` adds or replaces fields. */
function experiment(extra: string): string {
  return `import { defineExperiment, Predict } from "typelm";
export default defineExperiment({
  name: "tickets",
  dataset: "../data/tickets",
  program: ({ signature }) => new Predict(signature),
  optimizer: "simple",
${extra}
});
`;
}

describe("typelm run stops on a mistake in the experiment before any model call", () => {
  let fake: FakeProvider;
  let cwd: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: { team: "billing" } });
    cwd = join(dir, "project");
    mkdirSync(join(cwd, "node_modules"), { recursive: true });
    symlinkSync(root, join(cwd, "node_modules", "typelm"), "dir");
    mkdirSync(join(cwd, "experiments"));
    mkdirSync(join(cwd, "data/tickets"), { recursive: true });
    writeFileSync(join(cwd, "data/tickets/data.csv"), ticketsCsv());
    writeFileSync(join(cwd, "data/tickets/signature.json"), JSON.stringify({
      name: "Triage", description: "Route a support ticket to its team.",
      input: { ticket: { type: "string" } }, output: { team: { type: "enum", values: [...TEAMS] } },
    }));
    env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-checks" };
  });
  afterAll(() => fake.close());

  const cases: [string, string, RegExp][] = [
    ["a mistyped metric", `  metrics: ["acuracy"],`,
      /^typelm run: Cannot load the experiment file .*experiments\/case\.ts: experiment "tickets": unknown metric "acuracy" at metrics\[0\] \(did you mean "accuracy"\?\); the built-in metrics are "accuracy", "f1_score", "exact_match", "token_f1", or give a function \(example, prediction\) => score in \[0, 1\] or a Judge\n$/],
    // The signature is signature.json's, known only once the dataset is loaded: still before any model call.
    ["a mistyped labelField", `  labelField: "teams",`,
      /^typelm run: experiment "tickets": labelField "teams" is not an output field of the signature Triage \(did you mean "team"\?\); its output fields: team\n$/],
    ["an unknown optimizer option", `  optimizerOptions: { kDemo: 2 },`,
      /^typelm run: Cannot load the experiment file .*experiments\/case\.ts: experiment "tickets": unknown optimizerOptions key "kDemo" \(did you mean "kDemos"\?\): SimpleOptimizer, the "simple" optimizer, takes metric, seed, numTrials, kDemos, metricThreshold, instructions, concurrency, progress, maxCost, exampleTimeout, batch\n$/],
    ["an optimizer option with a bad value", `  optimizerOptions: { kDemos: -1 },`,
      /^typelm run: SimpleOptimizer option kDemos must be an integer ≥ 0; received -1\n$/],
    ["a kDemos that is not a number", `  optimizerOptions: { kDemos: "2" as never },`,
      /^typelm run: SimpleOptimizer option kDemos must be an integer ≥ 0; received "2"\n$/],
    ["two metrics of one name", `  metrics: ["accuracy", function score() { return 1; }, function score() { return 0; }],`,
      /^typelm run: Two metrics are named "score" \(metrics\[2\]\); give each function its own name\n$/],
  ];
  it.each(cases)("%s", async (_name, extra, message) => {
    writeFileSync(join(cwd, "experiments/case.ts"), experiment(extra));
    fake.reset();
    const r = await runBuiltCli(["run", "experiments/case.ts", "--lm", "openai/model-a"], cwd, env);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(1);
    expect(fake.requests).toHaveLength(0);
    if (process.env.SHOW_CHECKS) console.log(r.stderr);
  }, 60000);

  it("the same experiment without the mistake runs (so the cases above fail on the mistake alone)", async () => {
    writeFileSync(join(cwd, "experiments/case.ts"), experiment(`  metrics: ["accuracy"],\n  labelField: "team",\n  optimizerOptions: { kDemos: 1, numTrials: 1 },`));
    fake.reset();
    const r = await runBuiltCli(["run", "experiments/case.ts", "--lm", "openai/model-a"], cwd, env);
    expect(r.stderr).not.toMatch(/^typelm run:/m);
    expect(r.code).toBe(0);
    expect(fake.requests.length).toBeGreaterThan(0);
  }, 60000);
});
