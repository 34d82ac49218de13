// A lab store with what the viewer shows: two evaluations of the same examples (one with hostile
// text and failed rows), an optimization with GEPA-style parents, and two registry versions.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import pg from "pg";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "../../lib/store/registry/registry.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { copyLab } from "../../lib/store/copy/lab-copy.js";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, startPostgresServer } from "../helpers/postgres.js";
import type { ModelCall } from "../../lib/lm/usage-scope.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { SentimentProgram, tunedProgram } from "../store/registry-fixture.js";

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

/** Text a model or a dataset could hold that would run as script if the page took it as HTML. */
export const HOSTILE = [
  `<script>window.__pwned = 1</script>`,
  `<img src=x onerror="window.__pwned = 2">`,
  `"><svg onload="window.__pwned = 3">`,
  `</textarea></pre><script>window.__pwned = 4</script>`,
];

/** The system prompt of the recorded calls (long enough to be stored by hash). */
export const SYSTEM = `Classify the sentiment of the sentence. ${"Answer with one JSON object. ".repeat(6)}`;

/** A recorded model call of example `i`. */
export function call(i: number, reply: string, over: Partial<ModelCall> = {}): ModelCall {
  return {
    provider: "openai", model: "gpt-4o-mini", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: `sentence: example ${i}` }],
    reply, inputTokens: 120, outputTokens: 9, cost: 0.00002, latencyMs: 310, cached: false, ...over,
  };
}

export interface Fixture {
  path: string;
  evalA: string;
  evalB: string;
  optimization: string;
  /** An evaluation with a graded metric (its interval is a bootstrap over the rows). */
  graded: string;
  running: string;
}

export function row(index: number, over: Partial<EvaluationRow> = {}): EvaluationRow {
  const label = index % 3 === 0 ? "negative" : "positive";
  return {
    index, exampleId: `ex-${index}`, inputs: { sentence: `sentence number ${index}` }, expected: { sentiment: label },
    prediction: { sentiment: label }, scores: { accuracy: 1 }, error: null, durationMs: 12 + index, inputTokens: 30, outputTokens: 4, cost: 0.0001,
    ...over,
  };
}

const made: string[] = [];

/** Removes the folders `buildFixture` made (call it after the viewers on them are closed). */
export function removeFixtures(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Builds the store in a new temporary folder and closes it (the viewer opens it read-only); `extend` adds runs of a suite's own first. */
export async function buildFixture(extend?: (lab: LabStore) => void): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "typelm-view-"));
  made.push(dir);
  const path = join(dir, "lab.sqlite");
  const lab = LabStore.open(path);
  const config = { module: "SentimentProgram", metrics: ["accuracy"], models: ["openai/gpt-4o-mini"], examples: 60 };

  const evalA = lab.startRun({ kind: "evaluation", name: "baseline", config });
  for (let i = 0; i < 60; i++) {
    const wrong = i % 4 === 1;
    // Example 0 made two calls (the second answered from the cache); example 7's reply is hostile; the others none.
    const calls = i === 0 ? [call(0, '{"sentiment":"negative"}'), call(0, '{"sentiment":"negative"}', { cached: true, latencyMs: 1, cost: 0 })]
      : i === 7 ? [call(7, `${HOSTILE[0]} ${HOSTILE[1]}`)] : undefined;
    lab.recordExample(evalA, row(i, {
      inputs: { sentence: i < HOSTILE.length ? HOSTILE[i]! : `sentence number ${i}` },
      prediction: wrong ? { sentiment: "wrong" } : row(i).prediction,
      scores: { accuracy: wrong ? 0 : 1 },
      ...(i === 7 ? { prediction: null, scores: { accuracy: 0 }, error: `OutputError: the reply was not JSON: ${HOSTILE[1]}` } : {}),
    }), calls);
  }
  // 16 of 60 scored 0: i % 4 = 1 (15) and the failed example 7.
  lab.finishRun(evalA, { status: "completed", score: 44 / 60, summary: { metrics: { accuracy: 44 / 60 } } });

  const evalB = lab.startRun({ kind: "evaluation", name: "optimized", config: { ...config, models: ["anthropic/claude-x"] } });
  for (let i = 0; i < 60; i++) lab.recordExample(evalB, row(i, { scores: { accuracy: i % 12 === 1 ? 0 : 1 }, prediction: { sentiment: i % 12 === 1 ? "wrong" : row(i).expected["sentiment"] } }));
  lab.finishRun(evalB, { status: "completed", score: 55 / 60, summary: { metrics: { accuracy: 55 / 60 } } });

  // Trial 2's kind is hostile: it is shown in the trials table and in the chart's legend.
  const optimization = lab.startRun({ kind: "optimization", name: "GEPA", config: { experiment: "poems" } });
  for (let i = 0; i < 5; i++) {
    lab.recordTrial(optimization, {
      index: i, kind: i === 0 ? "baseline" : i === 2 ? HOSTILE[1]! : "candidate", parents: i === 0 ? [] : i === 4 ? [2, 3] : [i - 1],
      choices: {}, instructions: { classify: i === 3 ? HOSTILE[0]! : `Instruction version ${i}` }, demoIds: { classify: [`train-${i}`] },
      score: 0.5 + i * 0.1, exampleScores: null, budgetSpent: i * 10, lmCalls: 10, inputTokens: 100, outputTokens: 10, cost: 0.01,
      durationMs: 100, error: null, data: {}, reused: 0,
    });
  }
  lab.finishRun(optimization, { status: "completed", score: 0.9, bestTrial: 4, summary: {} });

  const graded = lab.startRun({ kind: "evaluation", name: "graded", config: { metrics: ["quality"], models: ["local/llama"], examples: 30 } });
  for (let i = 0; i < 30; i++) lab.recordExample(graded, row(i, { scores: { quality: [0.2, 0.5, 0.9][i % 3]! * (i % 7 === 0 ? 0.5 : 1) } }));
  lab.finishRun(graded, { status: "completed", score: null, summary: {} });

  const running = lab.startRun({ kind: "evaluation", name: "still going", config: { ...config, examples: 100 } });
  for (let i = 0; i < 3; i++) lab.recordExample(running, row(i));

  const registry = new Registry({ path });
  await registry.store({ moduleInstance: new SentimentProgram(), name: "sentiment", metadata: { score: 0.6 } });
  const tuned = tunedProgram();
  tuned.classify.instruction = `Label the sentence; irony counts as negative. ${HOSTILE[1]}`;
  await registry.store({ moduleInstance: tuned, name: "sentiment", metadata: { score: 0.8 } });
  extend?.(lab);
  lab.close();
  closeStoreSync(path);
  return { path, evalA, evalB, optimization, graded, running };
}

// ---- the same lab on PostgreSQL -------------------------------------------------------------------

/** The engines the viewer's suites run on: the file always; PostgreSQL where its server is installed (CI). */
export type Engine = "sqlite" | "postgresql";

/**
 * The fixture's lab copied into the PostgreSQL database at `url` by `typelm lab copy`'s code (runs keep
 * their ids and order; rows keep their recorded model calls, metric details and long texts).
 */
export async function copyToPostgres(fixture: Fixture, url: string): Promise<void> {
  await copyLab(fixture.path, url);
}

/** What the live tests write with, on either engine. */
export interface FixtureWriter {
  startRun(run: Parameters<LabStore["startRun"]>[0]): string;
  recordExample(runId: string, row: EvaluationRow): void;
  finishRun(runId: string, end: Parameters<LabStore["finishRun"]>[1]): void;
  /** Resolves once everything given is in the store (PostgreSQL's writes are queued). */
  flush(): Promise<void>;
}

export function openWriter(engine: Engine, location: string): FixtureWriter {
  if (engine === "sqlite") {
    const lab = LabStore.open(location);
    return {
      startRun: (run) => lab.startRun(run), recordExample: (id, r) => lab.recordExample(id, r), finishRun: (id, end) => lab.finishRun(id, end),
      flush: async () => undefined,
    };
  }
  const lab = PostgresLabStore.open(location);
  return {
    startRun: (run) => lab.startRun(run), recordExample: (id, r) => lab.recordExample(id, r), finishRun: (id, end) => lab.finishRun(id, end),
    flush: () => lab.flush(),
  };
}

/**
 * A digest of every table of the PostgreSQL lab at `url` (its rows in a fixed order, and how many):
 * equal before and after browsing when the viewer wrote nothing.
 */
export async function postgresDigest(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = (await client.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")).rows.map((r) => r.t);
    const digest: Record<string, string> = {};
    for (const t of tables) {
      const { rows } = await client.query<{ n: string; h: string | null }>(`SELECT count(*) AS n, md5(string_agg(x::text, '|' ORDER BY x::text)) AS h FROM "${t}" x`);
      digest[t] = `${rows[0]!.n} ${rows[0]!.h ?? ""}`;
    }
    return digest;
  } finally {
    await client.end();
  }
}

/**
 * The engines to run the viewer's suites on: PostgreSQL too where its server binaries are installed.
 * Without them the PostgreSQL half is skipped with the install line, except under CI=true, where it fails.
 */
export function viewerEngines(): Engine[] {
  if (postgresInstalled()) return ["sqlite", "postgresql"];
  if (process.env["CI"] === "true") throw new Error(`PostgreSQL is not installed, so the viewer cannot be tested on a team's lab. Install it with: ${POSTGRES_INSTALL_HINT}`);
  console.warn(`Skipping the viewer on PostgreSQL: no server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
  return ["sqlite"];
}

/** The fixture on `engine` (with `extend`'s runs): the file, or a fresh PostgreSQL server with the file's lab copied into it. */
export async function fixtureOn(engine: Engine, extend?: (lab: LabStore) => void): Promise<{ fixture: Fixture; location: string; stop: () => Promise<void> }> {
  const fixture = await buildFixture(extend);
  if (engine === "sqlite") return { fixture, location: fixture.path, stop: async () => undefined };
  const server = await startPostgresServer();
  try {
    const url = server.createDatabase("viewer");
    await copyToPostgres(fixture, url);
    return { fixture, location: url, stop: async () => { await closePostgresPools(); await server.stop(); } };
  } catch (error) {
    await closePostgresPools();
    await server.stop();
    throw error;
  }
}
