import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LM, LabStore, Registry } from "../../lib/index.js";
import { offline, runBuiltCli } from "../helpers/cli.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { holdWriteLock } from "../store/lock-holder.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cli-"));
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => LM.resetConfiguration());


/** The built command line in a child process: experiment files import "typelm" from dist/, as in a user's project. */
async function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = offline) {
  mkdirSync(cwd, { recursive: true });
  opened.push(join(cwd, ".typelm/lab.sqlite"));
  return runBuiltCli(args, cwd, env);
}

describe("typelm command line: usage and bad input", () => {
  it("an unknown experiment names the known ones", async () => {
    const r = await cli(["reproduce", "imdb"], join(dir, "unknown"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Unknown experiment "imdb": the known ones are poem-sentiment, banking77, gsm8k, restaurant8k');
  });

  it("bad options, commands and numbers print the usage with exit code 2", async () => {
    expect(await cli(["reproduce", "--frobnicate"], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining("Usage:") });
    expect(await cli(["fly"], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining('Unknown command "fly"') });
    expect(await cli([], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining("typelm reproduce") });
    expect(await cli(["help"], dir)).toMatchObject({ code: 0, stdout: expect.stringContaining("typelm runs") });
    expect(await cli(["reproduce", "--limit", "ten"], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining('--limit expects a whole number; received "ten"') });
    expect(await cli(["reproduce", "--limit", "0"], join(dir, "zero"))).toMatchObject({ code: 2, stderr: expect.stringContaining("--limit expects a whole number ≥ 1; received 0") });
  });

  it("an unreachable --lm stops before the run with an error naming the model and what to check", async () => {
    // Nothing listens on port 9.
    const env = { ...offline, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "sk-test-unreachable" };
    const r = await cli(["reproduce", "poem-sentiment", "--lm", "openai/gpt-4o-mini", "--limit", "3"], join(dir, "unreachable"), env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("The model openai/gpt-4o-mini (from --lm) could not be used");
    expect(r.stderr).toContain("--lm provider/model");
    expect(r.stderr).not.toMatch(/\w\.\. /); // the provider's message ends with a full stop: not two
    expect(r.stderr).not.toContain("sk-test-unreachable");
    expect(existsSync(join(dir, "unreachable/reports"))).toBe(false);
  });
});

describe("typelm reproduce with a small --limit", () => {
  it("--limit below the experiment's demo count runs with fewer demos instead of failing after the baseline", async () => {
    const cwd = join(dir, "tiny");
    const r = await cli(["reproduce", "poem-sentiment", "--limit", "2"], cwd);
    expect(r).toMatchObject({ code: 0, stdout: `${join(cwd, "reports/poem-sentiment/report.md")}\n` });
    const results = JSON.parse(readFileSync(join(cwd, "reports/poem-sentiment/results.json"), "utf8"));
    expect(results.optimizer.kDemos).toBe(2);
    expect(results.program.self.demos.length).toBeLessThanOrEqual(2);
  }, 60000);
});

describe("typelm reproduce with a report folder it cannot write", () => {
  it("stops before the run with an error naming the folder, not a stack trace after it", async () => {
    const cwd = join(dir, "blocked");
    mkdirSync(join(cwd, "reports"), { recursive: true });
    writeFileSync(join(cwd, "reports/poem-sentiment"), "a file where the report folder goes");
    const r = await cli(["reproduce", "poem-sentiment", "--limit", "3"], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`typelm reproduce: Cannot write the report to ${join(cwd, "reports/poem-sentiment")}`);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr).not.toContain("baseline:");
  });
});

describe("typelm runs", () => {
  it("in a folder without a lab store says so and creates nothing; --limit 0 is refused", async () => {
    const cwd = join(dir, "no-store");
    const r = await cli(["runs"], cwd);
    expect(r).toMatchObject({ code: 0, stdout: `No lab store at ${join(cwd, ".typelm/lab.sqlite")} (typelm reproduce creates it).\n` });
    expect(existsSync(join(cwd, ".typelm"))).toBe(false);
    expect(await cli(["runs", "--limit", "0"], cwd)).toMatchObject({ code: 2, stderr: expect.stringContaining("--limit expects a whole number ≥ 1; received 0") });
  });
});

describe("typelm reproduce with the lab store locked by another process", () => {
  it("stops with a ConfigurationError naming the file and saying to wait or use another file", async () => {
    const cwd = join(dir, "locked");
    const path = join(cwd, ".typelm/lab.sqlite");
    LabStore.open(path); // creates the file and its tables
    const holder = await holdWriteLock(path);
    let r;
    try {
      r = await cli(["reproduce", "poem-sentiment", "--limit", "3"], cwd);
    } finally {
      await holder.release();
    }
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Cannot record a run in the SQLite store at ${path}`);
    expect(r.stderr).toMatch(/SQLITE_BUSY.*Another process held a lock on the file for more than 5000 ms/s);
  }, 30000);
});

describe("typelm reproduce on the offline stand-in", () => {
  const cwd = join(dir, "standin");
  const results = join(cwd, "reports/poem-sentiment/results.json");
  let first: { code: number; stdout: string; stderr: string };
  let firstResults = "";

  beforeAll(async () => {
    first = await cli(["reproduce", "poem-sentiment", "--limit", "40", "--seed", "3"], cwd);
    firstResults = existsSync(results) ? readFileSync(results, "utf8") : "";
  }, 120000);

  it("writes report.md (first line: the model, and that the stand-in is not a language model) and results.json", () => {
    expect(first).toMatchObject({ code: 0, stdout: `${join(cwd, "reports/poem-sentiment/report.md")}\n` });
    const report = readFileSync(join(cwd, "reports/poem-sentiment/report.md"), "utf8");
    const firstLine = report.split("\n")[0]!;
    expect(firstLine).toMatch(/^Model: the offline stand-in \(SimulatedLM.*it is not a language model\)/);
    expect(report).toContain("## Confusion matrix, optimized (`label`");
    expect(report).toContain("| test split | baseline (95% CI) | optimized (95% CI) |");
    // The charts come from typelm/notebook's helpers: real PNG files, linked from the report.
    for (const png of ["metrics.png", "candidates.png"]) {
      expect(readFileSync(join(cwd, "reports/poem-sentiment", png)).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(report).toContain(`](${png})`);
    }
    expect(report).not.toContain("Not drawn");
    const parsed = JSON.parse(firstResults);
    expect(parsed).toMatchObject({
      experiment: "poem-sentiment", model: { id: "simulated/stand-in", source: "stand-in", standIn: true }, seed: 3, limit: 40,
      library: { name: "typelm", version: "0.1.0" },
      dataset: { name: "poem-sentiment", licence: "CC BY 4.0", splits: { train: { rows: 892, used: 40 }, test: { rows: 104, used: 40 } } },
      optimizer: { name: "MIPROv2", mode: "light" },
    });
    // The stand-in with no demos answers the first label for everything; the test split's gold labels say how often that is right.
    const gold = readFileSync("datasets/poem-sentiment/test.jsonl", "utf8").split("\n").filter(Boolean).slice(0, 40).map((l) => JSON.parse(l).label as string);
    expect(parsed.baseline.metrics.accuracy).toBeCloseTo(gold.filter((g) => g === "negative").length / 40, 10);
    expect(parsed.optimized.metrics.accuracy).toBeGreaterThan(parsed.baseline.metrics.accuracy);
    expect(parsed.program.self.demos.length).toBeGreaterThan(0);
    expect(parsed.optimizer.trials.length).toBeGreaterThan(0);
    expect(firstResults).not.toMatch(/\d{4}-\d{2}-\d{2}T|durationMs|runId/);
  });

  it("a second run with the same inputs writes a byte-identical results.json and a new registry version", async () => {
    const second = await cli(["reproduce", "poem-sentiment", "--limit", "40", "--seed", "3"], cwd);
    expect(second.code).toBe(0);
    expect(readFileSync(results, "utf8")).toBe(firstResults);
    expect((await new Registry({ path: join(cwd, ".typelm/lab.sqlite") }).versions("poem-sentiment")).map((v) => v.version)).toEqual([1, 2]);
  }, 120000);

  it("typelm runs lists the recorded runs, newest first", async () => {
    const r = await cli(["runs", "--kind", "evaluation"], cwd);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe(`lab store: ${join(cwd, ".typelm/lab.sqlite")}`);
    expect(lines[1]).toMatch(/^id\s+kind\s+name\s+status\s+started\s+score$/);
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/)[2])).toEqual([
      "poem-sentiment optimized", "poem-sentiment baseline", "poem-sentiment optimized", "poem-sentiment baseline",
    ]);
    const all = LabStore.open(join(cwd, ".typelm/lab.sqlite")).runs();
    expect(all.filter((run) => run.kind === "optimization")).toHaveLength(2);
  });
});

describe("typelm reproduce --lm against a fake OpenAI server", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: answer });
  });
  afterAll(() => fake.close());

  /** Fills whatever the request's schema asks for; the label depends on the verse so scores are not trivial. */
  function answer(request: FakeRequest): Record<string, unknown> {
    const last = request.messages[request.messages.length - 1]?.content ?? "";
    const fields = Object.keys((request.schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? { label: 1 });
    return Object.fromEntries(fields.map((f) => [f, f === "label" ? (String(last).length % 2 === 0 ? "positive" : "negative") : `${f} text`]));
  }

  it("runs the experiment end to end, and a second run replays from the cache with zero provider requests", async () => {
    const cwd = join(dir, "fake");
    const env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-cli" };
    process.env.OPENAI_BASE_URL = fake.openaiBaseURL; // the SDK reads its base URL from the environment at construction
    process.env.OPENAI_API_KEY = "sk-fake-cli";
    try {
      const args = ["reproduce", "poem-sentiment", "--lm", "openai/gpt-4o-mini", "--limit", "12"];
      const first = await cli(args, cwd, env);
      expect(first).toMatchObject({ code: 0 });
      const calls = fake.requests.length;
      expect(calls).toBeGreaterThan(12);
      const results = readFileSync(join(cwd, "reports/poem-sentiment/results.json"), "utf8");
      expect(JSON.parse(results).model).toEqual({ id: "openai/gpt-4o-mini", source: "--lm", standIn: false });
      const report = readFileSync(join(cwd, "reports/poem-sentiment/report.md"), "utf8");
      expect(report.split("\n")[0]).toBe("Model: openai/gpt-4o-mini (from --lm, temperature 0).");
      expect(report).toContain(`This run: ${calls} provider requests`);
      const second = await cli(args, cwd, env);
      expect(second).toMatchObject({ code: 0 });
      expect(fake.requests.length).toBe(calls);
      expect(readFileSync(join(cwd, "reports/poem-sentiment/results.json"), "utf8")).toBe(results);
      expect(readFileSync(join(cwd, "reports/poem-sentiment/report.md"), "utf8")).toContain("This run: 0 provider requests");
      expect(results + report).not.toContain("sk-fake-cli");
      // --no-cache asks the provider again: every distinct request, and the repeats the cache had
      // answered within the first run too. The same replies give the same results.
      expect(await cli([...args, "--no-cache"], cwd, env)).toMatchObject({ code: 0 });
      expect(fake.requests.length - calls).toBeGreaterThanOrEqual(calls);
      expect(readFileSync(join(cwd, "reports/poem-sentiment/results.json"), "utf8")).toBe(results);
    } finally {
      delete process.env.OPENAI_BASE_URL;
      delete process.env.OPENAI_API_KEY;
    }
  }, 120000);
});
