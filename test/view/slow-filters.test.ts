/**
 * Slow filters do not stall the viewer: text filters over every row of a large run run off the
 * server's event loop (the file: a worker thread; PostgreSQL: sessions of their own), so a trivial
 * page answers while they are in flight; each query is bounded in time (a 503 with a sentence); and on
 * PostgreSQL a query whose client went away is cancelled on the server. Ordering is asserted by which
 * request finished first, and the PostgreSQL cases hold a table lock, so no wall-clock bound decides.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { createRequire } from "node:module";
import pg from "pg";
import { startViewer } from "../../lib/view/server.js";
import { fixtureOn, openWriter, removeFixtures, viewerEngines, type Engine } from "./fixture.js";

afterAll(() => removeFixtures());

const ROWS = 100_000;

/** A run of `ROWS` rows, each input about 1,000 characters, written in one statement with the engine's own client. */
async function largeRun(engine: Engine, location: string): Promise<string> {
  const writer = openWriter(engine, location);
  const runId = writer.startRun({ kind: "evaluation", name: "large", config: { metrics: ["accuracy"] } });
  writer.finishRun(runId, { status: "completed", score: 1, summary: { metrics: { accuracy: 1 } } });
  await writer.flush();
  const columns = "run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost";
  if (engine === "sqlite") {
    const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
    const db = new Database(location);
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS - 1})
      INSERT INTO lab_rows (${columns}) SELECT @run, i, 'ex-' || i, json_object('text', replace(hex(zeroblob(500)), '00', 'ab') || i),
      '{"label":"x"}', '{"label":"x"}', '{"accuracy":1}', NULL, i, 1, 1, 0 FROM n`).run({ run: runId });
    db.close();
  } else {
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    await client.query(`INSERT INTO lab_rows (${columns}) SELECT $1, i, 'ex-' || i, json_build_object('text', repeat('ab', 500) || i)::text,
      '{"label":"x"}', '{"label":"x"}', '{"accuracy":1}', NULL, i, 1, 1, 0 FROM generate_series(0, ${ROWS - 1}) i`, [runId]);
    await client.end();
  }
  return runId;
}

describe.each(viewerEngines())("slow filters (%s)", (engine) => {
  it("a trivial page answers while six text filters over 100,000 rows are in flight", async () => {
    const { fixture, location, stop } = await fixtureOn(engine);
    const large = await largeRun(engine, location);
    const viewer = await startViewer({ store: location, port: 0, queryTimeoutMs: 600_000 });
    // PostgreSQL: the rows table is locked until the trivial page has answered, so the filters are
    // certainly in flight meanwhile (and, before, held every session of the viewer).
    const lock = engine === "postgresql" ? new pg.Client({ connectionString: location }) : undefined;
    try {
      // The viewer has read the large run once, as a person opening it would.
      expect((await fetch(`${viewer.url}api/runs/${large}/rows?size=1`)).status).toBe(200);
      if (lock !== undefined) {
        await lock.connect();
        await lock.query("BEGIN; LOCK TABLE lab_rows IN ACCESS EXCLUSIVE MODE");
      }
      const finished: string[] = [];
      const filters = Array.from({ length: 6 }, (_, k) =>
        fetch(`${viewer.url}api/runs/${large}/rows?text=nowhere-${k}&sort=score`).then(async (res) => {
          expect(res.status).toBe(200);
          expect(((await res.json()) as { total: number }).total).toBe(0);
          finished.push(`filter ${k}`);
        }));
      const trivial = await fetch(engine === "postgresql" ? viewer.url : `${viewer.url}runs/${fixture.evalA}`);
      expect(trivial.status).toBe(200);
      await trivial.text();
      finished.push("trivial");
      await lock?.query("ROLLBACK");
      await Promise.all(filters);
      // Before, on the file each filter held the server's only thread: the trivial page came after all six.
      if (engine === "postgresql") expect(finished[0]).toBe("trivial");
      else expect(finished.indexOf("trivial")).toBeLessThanOrEqual(1);
    } finally {
      await lock?.end();
      await viewer.close();
      await stop();
    }
  }, 300000);

  it("a query past its time is stopped and answered 503 with a sentence; the viewer goes on answering", async () => {
    const { fixture, location, stop } = await fixtureOn(engine);
    const large = await largeRun(engine, location);
    // The file: a 5 ms limit, which a scan of 100,000 rows of 1,000 characters cannot meet. PostgreSQL:
    // the rows table is locked, so the query waits until PostgreSQL stops it at the limit.
    const lock = engine === "postgresql" ? new pg.Client({ connectionString: location }) : undefined;
    if (lock !== undefined) {
      await lock.connect();
      await lock.query("BEGIN; LOCK TABLE lab_rows IN ACCESS EXCLUSIVE MODE");
    }
    const viewer = await startViewer({ store: location, port: 0, queryTimeoutMs: engine === "sqlite" ? 5 : 1000 });
    try {
      const res = await fetch(`${viewer.url}api/runs/${large}/rows?text=nowhere`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: string };
      expect(body.error).toMatch(/^the query took longer than [\d.]+ s, the viewer's limit for one query, and was stopped/);
      const pageRes = await fetch(`${viewer.url}runs/${large}?text=nowhere`);
      expect(pageRes.status).toBe(503);
      expect(await pageRes.text()).toContain("the viewer&#39;s limit for one query");
      expect((await fetch(`${viewer.url}api/runs`)).status).toBe(200);
    } finally {
      await lock?.query("ROLLBACK");
      await lock?.end();
      await viewer.close();
      await stop();
    }
    void fixture;
  }, 600000);
});

describe.each(viewerEngines().filter((e) => e === "postgresql"))("a slow filter whose client went away (%s)", (engine) => {
  it("is cancelled on the server", async () => {
    const { location, stop } = await fixtureOn(engine);
    const large = await largeRun(engine, location);
    const lock = new pg.Client({ connectionString: location });
    await lock.connect();
    await lock.query("BEGIN; LOCK TABLE lab_rows IN ACCESS EXCLUSIVE MODE");
    const viewer = await startViewer({ store: location, port: 0, queryTimeoutMs: 600_000 });
    // Watched from a session of its own: within the lock's transaction pg_stat_activity would not change.
    const watch = new pg.Client({ connectionString: location });
    await watch.connect();
    const waiting = async () => (await watch.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'typelm view' AND state = 'active' AND query LIKE '%strpos%'")).rows[0]!.n;
    try {
      const gone = new AbortController();
      const request = fetch(`${viewer.url}api/runs/${large}/rows?text=nowhere`, { signal: gone.signal }).catch((e: unknown) => e);
      for (let i = 0; i < 600 && (await waiting()) === "0"; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await waiting()).toBe("1");
      gone.abort();
      await request;
      // The lock is still held: only a cancellation ends the query.
      for (let i = 0; i < 600 && (await waiting()) !== "0"; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await waiting()).toBe("0");
    } finally {
      await lock.query("ROLLBACK");
      await lock.end();
      await watch.end();
      await viewer.close();
      await stop();
    }
  }, 600000);
});
