import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { offline, runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "typelm-yours-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A user's project folder: typelm (this repository, built) and zod installed in node_modules, as npm would. */
function project(name: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, "node_modules"), { recursive: true });
  symlinkSync(root, join(path, "node_modules", "typelm"), "dir");
  symlinkSync(join(root, "node_modules", "zod"), join(path, "node_modules", "zod"), "dir");
  return path;
}

const TEAMS = ["billing", "technical", "account"] as const;
const WORDS: Record<(typeof TEAMS)[number], string[]> = {
  billing: ["charged twice", "a refund", "the invoice", "my card", "the annual price"],
  technical: ["the app crashes", "an error 500", "the export", "sync", "the search page"],
  account: ["my password", "my email address", "two-factor login", "a second user", "my username"],
};
/** 30 tickets, 10 per team; every text has a comma inside quotes and some have a quote, so CSV quoting matters. */
function ticketsCsv(): string {
  const rows = ["id,ticket,team"];
  let n = 0;
  for (const team of TEAMS) {
    for (let i = 0; i < 10; i++) {
      const text = `Hello, it is about ${WORDS[team][i % 5]}${i >= 5 ? ` (again, "urgent")` : ""}`;
      rows.push(`t${String(++n).padStart(2, "0")},"${text.replace(/"/g, '""')}",${team}`);
    }
  }
  return rows.join("\r\n") + "\r\n";
}

const EXPERIMENT = `import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";

const Triage = Signature.define({
  name: "Triage",
  description: "Route a support ticket to its team.",
  input: { ticket: z.string() },
  output: { team: z.enum(["billing", "technical", "account"]) },
});

export default defineExperiment({
  name: "tickets",
  dataset: "../data/tickets",
  signature: Triage,
  program: ({ signature }) => new Predict(signature),
  metrics: ["accuracy", "f1_score"],
  labelField: "team",
  optimizer: "mipro",
  optimizerOptions: { mode: "light", kDemos: 2 },
});
`;

/**
 * model-a always says "billing"; model-b reads the ticket (the last user message) and finds the team's
 * words, so the two models differ on the same examples and the comparison has something to show.
 */
function answer(request: FakeRequest): Record<string, unknown> {
  const text = String(request.messages[request.messages.length - 1]?.content ?? "");
  const fields = Object.keys((request.schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? { team: 1 });
  const found = TEAMS.find((t) => WORDS[t].some((w) => text.includes(w))) ?? "account";
  const team = String(request.body?.model).includes("model-b") ? found : "billing";
  return Object.fromEntries(fields.map((f) => [f, f === "team" ? team : `${f} text`]));
}

describe("an experiment of your own: typelm run with two models, then runs, show and compare", () => {
  let fake: FakeProvider;
  let cwd: string;
  let env: NodeJS.ProcessEnv;
  const args = ["run", "experiments/tickets.ts", "--lm", "openai/model-a", "--lm", "openai/model-b"];
  let first: { code: number; stdout: string; stderr: string };
  let calls = 0;

  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: answer });
    cwd = project("tickets");
    mkdirSync(join(cwd, "experiments"));
    mkdirSync(join(cwd, "data/tickets"), { recursive: true });
    writeFileSync(join(cwd, "experiments/tickets.ts"), EXPERIMENT);
    writeFileSync(join(cwd, "data/tickets/data.csv"), ticketsCsv());
    env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-yours" };
    first = await runBuiltCli(args, cwd, env);
    calls = fake.requests.length;
  }, 120000);
  afterAll(() => fake.close());

  it("runs the TypeScript file as it is, once per model, and writes one report with a row per model", () => {
    expect(first.stderr).not.toMatch(/^\s+at /m);
    expect(first).toMatchObject({ code: 0, stdout: `${join(cwd, "reports/tickets/report.md")}\n` });
    expect(new Set(fake.requests.map((r) => r.body?.model))).toEqual(new Set(["model-a", "model-b"]));
    const results = JSON.parse(readFileSync(join(cwd, "reports/tickets/results.json"), "utf8"));
    expect(Object.keys(results.models)).toEqual(["openai/model-a", "openai/model-b"]);
    // 30 rows split 60/20/20 by id: 18 train, 6 dev, 6 test.
    expect(results.dataset.splits.test).toMatchObject({ rows: 6, used: 6 });
    const a = results.models["openai/model-a"];
    const b = results.models["openai/model-b"];
    expect(a.baseline.examples).toBe(6);
    // model-a says "billing" to everything: its baseline accuracy is the share of billing tickets in test.
    expect(b.baseline.metrics.accuracy).toBe(1);
    expect(a.baseline.metrics.accuracy).toBeLessThan(1);
    for (const m of [a, b]) expect(Object.keys(m.comparison)).toEqual(["accuracy", "f1_score"]);
    const md = readFileSync(join(cwd, "reports/tickets/report.md"), "utf8");
    expect(md.split("\n")[0]).toBe("Models: openai/model-a (from --lm, temperature 0); openai/model-b (from --lm, temperature 0).");
    expect(md).toContain("| model | metric | baseline (95% CI) | optimized (95% CI) | optimized − baseline (95% CI) | p | p (Holm) | verdict |");
    // Holm over the report's four comparisons (2 metrics × 2 models), by hand: sort the p-values,
    // multiply the i-th smallest by (4 − i), keep the running maximum, cap at 1.
    const family = [a, b].flatMap((m) => ["accuracy", "f1_score"].map((metric) => m.comparison[metric]!));
    const order = family.map((_, i) => i).sort((x, y) => family[x]!.pValue - family[y]!.pValue);
    let running = 0;
    const holm = new Array<number>(4);
    order.forEach((idx, rank) => { running = Math.max(running, Math.min(1, (4 - rank) * family[idx]!.pValue)); holm[idx] = running; });
    family.forEach((c, i) => expect(c.pAdjusted).toBeCloseTo(holm[i]!, 12));
    for (const id of ["openai/model-a", "openai/model-b"]) {
      expect(md).toMatch(new RegExp(`\\| \`${id}\` \\| accuracy \\| \\d\\.\\d{3} \\(\\d\\.\\d{3}–\\d\\.\\d{3}\\) \\| \\d\\.\\d{3} \\(\\d\\.\\d{3}–\\d\\.\\d{3}\\) \\| [+-]?\\d\\.\\d{3} \\([+-]?\\d\\.\\d{3} to [+-]?\\d\\.\\d{3}\\) \\| [<=]? ?[\\d.]+ \\| [<=]? ?[\\d.]+ \\| (not )?significant at the 5% level[^|]* \\|`));
      expect(md).toContain(`## Optimized program (\`${id}\`)`);
    }
    expect(md).not.toContain("datasets/tickets/ATTRIBUTION.md");
    expect(existsSync(join(cwd, "reports/tickets/metrics.png"))).toBe(true);
    expect(existsSync(join(cwd, "reports/tickets/candidates-openai-model-a.png"))).toBe(true);
    expect(md + JSON.stringify(results)).not.toContain("sk-fake-yours");
  });

  it("results.json carries a manifest: the file's and the data's sha256, versions, models, seed and options, and no times or ids", () => {
    const json = readFileSync(join(cwd, "reports/tickets/results.json"), "utf8");
    const { manifest } = JSON.parse(json);
    const sha = (path: string) => createHash("sha256").update(readFileSync(join(cwd, path))).digest("hex");
    expect(manifest).toEqual({
      experiment: { file: "experiments/tickets.ts", sha256: sha("experiments/tickets.ts") },
      dataset: { name: "tickets", files: { "data.csv": sha("data/tickets/data.csv") } },
      typelm: JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version,
      node: process.versions.node,
      models: ["openai/model-a", "openai/model-b"],
      seed: 0,
      limit: null,
      options: { metrics: ["accuracy", "f1_score"], optimizer: "mipro", optimizerOptions: { kDemos: 2, mode: "light" } },
    });
    expect(json).not.toMatch(/startedAt|durationMs|"runId"|\d{4}-\d\d-\d\dT\d\d:/);
  });

  it("a rerun is byte-identical and asks the provider nothing (the replies come from the LM cache)", async () => {
    const json = readFileSync(join(cwd, "reports/tickets/results.json"), "utf8");
    const again = await runBuiltCli(args, cwd, env);
    expect(again).toMatchObject({ code: 0 });
    expect(fake.requests.length).toBe(calls);
    expect(readFileSync(join(cwd, "reports/tickets/results.json"), "utf8")).toBe(json);
    expect(readFileSync(join(cwd, "reports/tickets/report.md"), "utf8")).toContain("This run: 0 provider requests");
  }, 120000);

  it("--batch sends the test evaluations through the provider's batch service, with the same numbers as live", async () => {
    const before = fake.batches.length;
    const r = await runBuiltCli(["run", "experiments/tickets.ts", "--lm", "openai/model-b", "--batch", "--no-cache", "--out", "batched"], cwd, env);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.code).toBe(0);
    // The baseline and the optimized evaluation: one batch each; MIPROv2's own calls stay live.
    expect(fake.batches.length - before).toBe(2);
    expect(fake.batches.slice(before).map((b) => b.customIds.length)).toEqual([6, 6]);
    const batched = JSON.parse(readFileSync(join(cwd, "batched/tickets/results.json"), "utf8"));
    const live = JSON.parse(readFileSync(join(cwd, "reports/tickets/results.json"), "utf8")).models["openai/model-b"];
    expect(batched.baseline.metrics).toEqual(live.baseline.metrics);
    expect(batched.optimized.metrics).toEqual(live.optimized.metrics);
  }, 120000);

  it("show prints an evaluation's metrics and failed rows and an optimization's trials; compare pairs two evaluations", async () => {
    const runs = await runBuiltCli(["runs", "--kind", "evaluation"], cwd, env);
    const lines = runs.stdout.trim().split("\n").slice(2).map((l) => l.split(/\s{2,}/));
    const baselineA = lines.find((l) => l[2] === "tickets baseline (openai/model-a)")![0]!;
    const baselineB = lines.find((l) => l[2] === "tickets baseline (openai/model-b)")![0]!;
    const shown = await runBuiltCli(["show", baselineA], cwd, env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`evaluation run ${baselineA}: tickets baseline (openai/model-a)`);
    expect(shown.stdout).toMatch(/6 examples, 0 failed/);
    expect(shown.stdout).toMatch(/accuracy\s+0\.\d{3}/);
    const optimization = (await runBuiltCli(["runs", "--kind", "optimization"], cwd, env)).stdout.trim().split("\n")[2]!.split(/\s{2,}/)[0]!;
    const trials = await runBuiltCli(["show", optimization], cwd, env);
    expect(trials.stdout).toMatch(/^trial\s+kind\s+validation score\s+reused\s+choices\s+error$/m);
    expect(trials.stdout).toMatch(/returned trial \d+, score \d\.\d{3}, validation \(chosen on it\)/);
    expect(trials.stdout).toMatch(/^\d+\s+bootstrap\s/m);

    const compared = await runBuiltCli(["compare", baselineA, baselineB], cwd, env);
    expect(compared.code).toBe(0);
    const out = compared.stdout;
    expect(out).toMatch(/^metric\s+A\s+B\s+difference\s+95% CI\s+interval\s+p-value\s+p \(Holm\)\s+test\s+verdict\s+mde \(80% power\)$/m);
    expect(out).toMatch(/^accuracy \(primary\)\s+0\.\d{3}\s+1\.000\s+\+0\.\d{3}\s+[+-]\d\.\d{3} to [+-]\d\.\d{3}\s+clopper-pearson\s+\S+\s+\S+\s+mcnemar-exact\s+(significant|not significant\s+(none|0\.\d{3}))$/m);
    // model-a answered "billing" where model-b got it right: each such example is listed with its input, expected and both answers.
    expect(out).toMatch(/Examples that changed on accuracy: [1-9]\d* better, 0 worse/);
    expect(out).toMatch(/\+ t\d\d \(0\.00 -> 1\.00\)\n {4}input: {4}\{"ticket":"Hello, it is about [^"]+"\}\n {4}expected: \{"team":"(technical|account)"\}\n {4}A: {8}\{"team":"billing"\}\n {4}B: {8}\{"team":"(technical|account)"\}/);
    if (process.env.SHOW_COMPARE) console.log(out);
  }, 60000);
});

describe("typelm init, then typelm run, offline", () => {
  it("writes experiments/<name>.ts and data/<name>/, refuses to overwrite them, and the new experiment runs with the stand-in", async () => {
    const cwd = project("init");
    const made = await runBuiltCli(["init", "support"], cwd);
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toContain("experiments/support.ts\ndata/support/data.csv\nNext: typelm run experiments/support.ts");
    expect(readFileSync(join(cwd, "data/support/data.csv"), "utf8").split("\n")[0]).toBe("id,ticket,team");
    const again = await runBuiltCli(["init", "support"], cwd);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`typelm init: ${join(cwd, "experiments/support.ts")} already exists; init never overwrites`);
    const ran = await runBuiltCli(["run", "experiments/support.ts"], cwd);
    expect(ran.stderr).not.toMatch(/^\s+at /m);
    expect(ran).toMatchObject({ code: 0 });
    const md = readFileSync(join(cwd, "reports/support/report.md"), "utf8");
    expect(md.split("\n")[0]).toMatch(/^Model: the offline stand-in/);
    expect(md).toContain("**accuracy**, optimized − baseline:");
  }, 120000);
});

describe("typelm run, show and compare: bad input is one sentence and exit code 1", () => {
  const cases: [string, (cwd: string) => string[], RegExp][] = [
    ["a missing file", () => ["run", "experiments/nope.ts"], /^typelm run: Cannot read the experiment file .*experiments\/nope\.ts: it does not exist\n$/],
    ["a file without a default export", (cwd) => {
      writeFileSync(join(cwd, "no-default.ts"), "export const x: number = 1;\n");
      return ["run", "no-default.ts"];
    }, /^typelm run: The experiment file .*no-default\.ts has no default export made by defineExperiment: end it with "export default defineExperiment\(\{ name, dataset, program \}\)"\n$/],
    ["an unknown optimizer", (cwd) => {
      writeFileSync(join(cwd, "bad-optimizer.ts"), EXPERIMENT.replace('optimizer: "mipro"', 'optimizer: "adam" as never'));
      return ["run", "bad-optimizer.ts"];
    }, /^typelm run: Cannot load the experiment file .*bad-optimizer\.ts: experiment "tickets": unknown optimizer "adam"; the known ones are "mipro", "gepa", "simple", "none", or a function \(context\) => optimizer\n$/],
    ["a file that does not compile", (cwd) => {
      writeFileSync(join(cwd, "broken.ts"), "export default defineExperiment({ name: \n");
      return ["run", "broken.ts"];
    }, /^typelm run: Cannot load the experiment file .*broken\.ts: .+\n$/],
    ["an unknown run id", () => ["show", "run-that-is-not-there"], /^typelm show: (no run whose id is or starts with "run-that-is-not-there" in .*lab\.sqlite; "typelm runs" lists the runs and their ids|no lab store at .*)\n$/],
    ["init with a bad name", () => ["init", "../escape"], /^typelm init: "\.\.\/escape" is not a usable name: .*\n$/],
  ];
  it.each(cases)("%s", async (_name, make, message) => {
    const cwd = project(`bad-${_name.replace(/\W+/g, "-")}`);
    const r = await runBuiltCli(make(cwd), cwd);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  }, 60000);

  it("compare with one id is a usage error: exit code 2, the sentence, then compare's usage", async () => {
    const r = await runBuiltCli(["compare", "only-one"], project("bad-compare-with-one-id"));
    expect(r.stderr).toMatch(/^typelm compare: compare takes two evaluation run ids \(typelm runs --kind evaluation lists them\)\n\nUsage:\n {2}typelm compare /);
    expect(r.code).toBe(2);
  }, 60000);
});
