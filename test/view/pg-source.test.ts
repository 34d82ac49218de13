/**
 * The viewer's reads of a team's lab on PostgreSQL give the answers the file's give on the same data
 * (the fixture's lab copied into a database as `typelm lab copy` copies it): the same rows, totals and
 * order for every filter, sort and page. Its sessions are read-only, it applies no migration, a stored
 * value that is not JSON does not stop a page, and a URL's password never shows.
 */
import { afterAll, beforeAll, describe, expect, it, test } from "@jest/globals";
import pg from "pg";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startViewCli } from "../helpers/cli.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { closePostgresPools, migratePostgres, PG_MIGRATIONS } from "../../lib/store/pg.js";
import { PostgresViewSource, readOnlyPool } from "../../lib/view/data/pg-source.js";
import { SqliteViewSource } from "../../lib/view/data/queries.js";
import type { RowQuery, ViewRow, ViewSource } from "../../lib/view/data/source.js";
import { startViewer } from "../../lib/view/server.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { buildFixture, copyToPostgres, HOSTILE, postgresDigest, removeFixtures, type Fixture } from "./fixture.js";

const installed = postgresInstalled();
if (!installed && process.env["CI"] === "true") {
  test("the PostgreSQL server binaries are installed (CI installs them)", () => {
    throw new Error(`PostgreSQL is not installed, so the viewer's PostgreSQL reads cannot be tested. Install it with: ${POSTGRES_INSTALL_HINT}`);
  });
}
if (!installed) console.warn(`Skipping the viewer's PostgreSQL reads: no server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
const suite = installed ? describe : describe.skip;

/** Rows without their write position (the file's rowid and the database's seq count differently). */
const unseq = (rows: ViewRow[]) => rows.map(({ seq: _seq, ...rest }) => rest);

async function sql(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

suite("the viewer's reads of a PostgreSQL lab", () => {
  let server: PostgresTestServer;
  let fixture: Fixture;
  let url: string;
  let file: SqliteViewSource;
  let team: PostgresViewSource;
  let databases = 0;

  beforeAll(async () => {
    server = await startPostgresServer();
    fixture = await buildFixture();
    url = server.createDatabase("lab");
    await copyToPostgres(fixture, url);
    file = new SqliteViewSource(fixture.path);
    team = await PostgresViewSource.open(url);
  }, 60000);

  afterAll(async () => {
    await team?.close();
    await file?.close();
    await closePostgresPools();
    await server?.stop();
    if (fixture !== undefined) closeStoreSync(fixture.path);
    removeFixtures();
  }, 30000);

  /** Both engines' answer to the same read. */
  async function both<T>(read: (source: ViewSource) => Promise<T>): Promise<[T, T]> {
    return [await read(file), await read(team)];
  }

  it("lists the same runs, newest first, for every filter and page", async () => {
    for (const query of [
      { limit: 50, offset: 0 }, { limit: 2, offset: 1 }, { kind: "optimization", limit: 50, offset: 0 }, { status: "running", limit: 50, offset: 0 },
      { name: "BASEL", limit: 50, offset: 0 }, { model: "claude", limit: 50, offset: 0 }, { model: "GPT-4O", kind: "evaluation", limit: 50, offset: 0 },
      { model: "nothing", limit: 50, offset: 0 },
    ]) {
      const [a, b] = await both((s) => s.runs(query));
      expect(b).toEqual(a);
    }
    const all = await team.runs({ limit: 50, offset: 0 });
    expect(all.runs.map((r) => r.id)).toEqual([fixture.running, fixture.graded, fixture.optimization, fixture.evalB, fixture.evalA]);
    expect((await team.runs({ model: "claude", limit: 50, offset: 0 })).runs.map((r) => r.id)).toEqual([fixture.evalB]);
  });

  it("finds a run by its id or the start of it, as the file does", async () => {
    for (const given of [fixture.evalA, fixture.evalA.slice(0, 8), "", "no-such-run"]) {
      const [a, b] = await both((s) => s.run(given));
      expect(b).toEqual(a);
    }
    expect((await team.run(fixture.evalA.slice(0, 8)))?.id).toBe(fixture.evalA);
  });

  it("gives the same rows, totals and order for every filter, sort and page", async () => {
    const queries: RowQuery[] = [];
    for (const filter of [{}, { failed: true }, { label: "negative" }, { label: "nothing-has-this" }, { text: "NUMBER 5" }, { text: "<script>" }, { maxScore: 0 }, { maxScore: 0.5, failed: true }]) {
      for (const order of [{ sort: "index" as const }, { sort: "index" as const, descending: true }, { sort: "score" as const }, { sort: "score" as const, descending: true }, { sort: "duration" as const, descending: true }]) {
        for (const page of [{ limit: 50, offset: 0 }, { limit: 7, offset: 14 }]) queries.push({ metric: "accuracy", ...filter, ...order, ...page });
      }
    }
    let compared = 0;
    for (const runId of [fixture.evalA, fixture.evalB, fixture.graded]) {
      for (const q of queries) {
        const query = runId === fixture.graded ? { ...q, metric: "quality" } : q;
        const [a, b] = await both((s) => s.rows(runId, query));
        expect({ total: b.total, rows: unseq(b.rows) }).toEqual({ total: a.total, rows: unseq(a.rows) });
        compared += a.rows.length;
      }
    }
    // The comparison is not of empty answers: the filters match rows (and the label filter the 20 negatives).
    expect(compared).toBeGreaterThan(1000);
    expect((await team.rows(fixture.evalA, { label: "negative", limit: 50, offset: 0 })).total).toBe(20);
    expect((await team.rows(fixture.evalA, { failed: true, limit: 50, offset: 0 })).rows.map((r) => r.exampleId)).toEqual(["ex-7"]);
    // Sorted by a graded score going down: 0.9 first (index order among equals).
    expect((await team.rows(fixture.graded, { metric: "quality", sort: "score", descending: true, limit: 3, offset: 0 })).rows.map((r) => r.index)).toEqual([2, 5, 8]);
  });

  it("counts, scores, labels, examples, calls, comparisons' rows, trials and the registry are the file's", async () => {
    for (const runId of [fixture.evalA, fixture.evalB, fixture.graded, fixture.running]) {
      expect((await both((s) => s.rowCounts(runId)))[1]).toEqual(await file.rowCounts(runId));
      for (const metric of ["accuracy", "quality", "missing"]) {
        const [a, b] = await both((s) => s.scoreCounts(runId, metric));
        expect(b).toEqual(a);
        const [sa, sb] = await both((s) => s.scores(runId, metric));
        expect([...sb]).toEqual([...sa]);
      }
      const [la, lb] = await both((s) => s.labels(runId));
      expect(lb).toEqual(la);
      const [sra, srb] = await both((s) => s.scoreRows(runId));
      expect(srb).toEqual(sra);
      const [sca, scb] = await both((s) => s.scoreColumns(runId, ["accuracy", "quality", "missing"]));
      expect({ ids: scb.ids, scores: Object.fromEntries(Object.entries(scb.scores).map(([m, v]) => [m, [...v]])) })
        .toEqual({ ids: sca.ids, scores: Object.fromEntries(Object.entries(sca.scores).map(([m, v]) => [m, [...v]])) });
      expect(sca.ids).toEqual(sra.map((r) => r.exampleId ?? `#${r.index}`));
      expect([...sca.scores["accuracy"]!]).toEqual(sra.map((r) => r.scores["accuracy"] ?? 0));
    }
    expect(await team.scoreCounts(fixture.evalA, "accuracy")).toEqual({ n: 60, sum: 44, other: 0 });
    expect(await team.labels(fixture.evalA)).toEqual(["positive", "negative"]);
    for (const index of [0, 3, 7, 59, 999]) {
      const [a, b] = await both((s) => s.row(fixture.evalA, index));
      expect(b === undefined ? b : unseq([b])).toEqual(a === undefined ? a : unseq([a]));
      const [ca, cb] = await both((s) => s.calls(fixture.evalA, index));
      expect(cb).toEqual(ca);
    }
    // Example 0's two calls, their system prompt read back from lab_texts.
    expect((await team.calls(fixture.evalA, 0))?.map((c) => [c.cached, c.messages[0]!.content.length > 100])).toEqual([[false, true], [true, true]]);
    expect((await team.calls(fixture.evalA, 7))?.[0]?.reply).toBe(`${HOSTILE[0]} ${HOSTILE[1]}`);
    const ids = ["ex-5", "ex-7", "ex-40", "#3", "nothing"];
    const [ra, rb] = await both((s) => s.rowsById(fixture.evalA, ids));
    expect(unseq(rb)).toEqual(unseq(ra));
    expect(rb.map((r) => r.exampleId)).toEqual(["ex-5", "ex-7", "ex-40"]);
    const [ta, tb] = await both((s) => s.trials(fixture.optimization));
    expect(tb).toEqual(ta);
    expect(tb).toHaveLength(5);
    const [fa, fb] = await both((s) => s.fullRun(fixture.optimization));
    expect(fb).toEqual(fa);
    const [ea, eb] = await both(async (s) => { const r = await s.fullRun(fixture.evalA); return r?.kind === "evaluation" ? unseq(r.rows as ViewRow[]) : r; });
    expect(eb).toEqual(ea);
    const [na, nb] = await both((s) => s.registryNames());
    expect(nb).toEqual(na);
    expect(nb.map((n) => [n.name, n.versions])).toEqual([["sentiment", 2]]);
    const [va, vb] = await both((s) => s.versions("sentiment"));
    expect(vb).toEqual(va);
  });

  it("live polling: the rows written after a position, in the order they were written", async () => {
    const before = await team.lastSeq(fixture.running);
    expect(before).toBeGreaterThan(0);
    const { PostgresLabStore } = await import("../../lib/store/pg-lab-store.js");
    const writer = PostgresLabStore.open(url);
    const { row } = await import("./fixture.js");
    writer.recordExample(fixture.running, row(9));
    writer.recordExample(fixture.running, row(8));
    await writer.flush();
    const after = await team.rows(fixture.running, { after: before, limit: 50, offset: 0 });
    expect(after.rows.map((r) => r.index)).toEqual([9, 8]);
    expect(after.total).toBe(5);
    expect(await team.lastSeq(fixture.running)).toBe(after.rows[1]!.seq);
    expect((await team.rows(fixture.running, { after: after.rows[1]!.seq, limit: 50, offset: 0 })).rows).toEqual([]);
  });

  it("its sessions are read-only: a write through them fails, and browsing every page changes no table", async () => {
    const digest = await postgresDigest(url);
    const pool = readOnlyPool(url);
    try {
      await expect(pool.query("INSERT INTO lab_texts (hash, text) VALUES ('h', 't')")).rejects.toMatchObject({ code: "25006" });
      await expect(pool.query("DELETE FROM lab_rows")).rejects.toMatchObject({ code: "25006" });
      await expect(pool.query("CREATE TABLE stray (x int)")).rejects.toMatchObject({ code: "25006" });
    } finally {
      await pool.end();
    }
    const viewer = await startViewer({ store: url, port: 0 });
    try {
      for (const path of ["", `runs/${fixture.evalA}`, `runs/${fixture.evalA}?label=negative&sort=score`, `runs/${fixture.graded}`, `runs/${fixture.evalA}/rows/0`,
        `runs/${fixture.optimization}`, `compare/${fixture.evalA}/${fixture.evalB}`, "registry", "registry/sentiment", `api/runs/${fixture.running}/rows?after=0`]) {
        expect((await fetch(viewer.url + path)).status).toBe(200);
      }
    } finally {
      await viewer.close();
    }
    expect(await postgresDigest(url)).toEqual(digest);
  });

  it("a lab migrated by an older typelm: shown as it is (no migration), rows in index order, calls null without their column", async () => {
    const old = server.createDatabase(`old${databases++}`);
    const client = new pg.Client({ connectionString: old });
    await client.connect();
    try {
      await migratePostgres(client as unknown as pg.PoolClient, PG_MIGRATIONS.filter((m) => m.name < "006"));
      await client.query(`INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('old-run', 'evaluation', 'old', 'running', '2026-01-01T00:00:00Z', '{"metrics":["accuracy"]}', '{}')`);
      for (const [idx, error] of [[1, null], [0, "ProviderError: 500"]] as const) {
        await client.query(`INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost)
          VALUES ('old-run', $1, $2, '{"q":"x"}', '{"a":"y"}', NULL, '{"accuracy":1}', $3, 1, 1, 1, 0)`, [idx, `e${idx}`, error]);
      }
    } finally {
      await client.end();
    }
    const migrations = (await sql(old, "SELECT name FROM schema_migrations ORDER BY name")).rows;
    const source = await PostgresViewSource.open(old);
    try {
      expect(await source.calls("old-run", 0)).toBeNull();
      const rows = await source.rows("old-run", { limit: 50, offset: 0 });
      expect(rows.rows.map((r) => [r.index, r.seq])).toEqual([[0, 1], [1, 2]]);
      expect((await source.rows("old-run", { failed: true, limit: 50, offset: 0 })).rows.map((r) => r.exampleId)).toEqual(["e0"]);
      expect(await source.lastSeq("old-run")).toBe(2);
      expect((await source.row("old-run", 1))?.exampleId).toBe("e1");
    } finally {
      await source.close();
    }
    expect((await sql(old, "SELECT name FROM schema_migrations ORDER BY name")).rows).toEqual(migrations);
    expect((await sql(old, "SELECT column_name FROM information_schema.columns WHERE table_name = 'lab_rows' AND column_name IN ('seq', 'calls_json')")).rows).toEqual([]);
  });

  it("a stored value that is not JSON is read as missing: the page, the filters and the counts still answer", async () => {
    const bad = server.createDatabase(`bad${databases++}`);
    await copyToPostgres(fixture, bad);
    await sql(bad, "UPDATE lab_rows SET scores_json = 'not json', expected_json = '{\"sentiment\": broken' WHERE run_id = $1 AND idx = 2", [fixture.graded]);
    await sql(bad, "UPDATE lab_runs SET config_json = '{models: oops' WHERE id = $1", [fixture.evalB]);
    const source = await PostgresViewSource.open(bad);
    try {
      const good = await team.scoreCounts(fixture.graded, "quality");
      // Row 2 scored 0.9; read as missing it counts 0.
      const counts = await source.scoreCounts(fixture.graded, "quality");
      expect(counts.n).toBe(30);
      expect(counts.sum).toBeCloseTo(good.sum - 0.9, 10);
      const sorted = await source.rows(fixture.graded, { metric: "quality", sort: "score", limit: 2, offset: 0 });
      expect(sorted.rows[0]).toMatchObject({ index: 2, scores: {}, expected: {} });
      expect((await source.rows(fixture.graded, { label: "negative", limit: 50, offset: 0 })).total).toBe(10);
      expect(await source.labels(fixture.graded)).toEqual(["positive", "negative"]);
      expect((await source.runs({ model: "gpt", limit: 50, offset: 0 })).runs.map((r) => r.id)).toEqual([fixture.running, fixture.evalA]);
    } finally {
      await source.close();
    }
    const viewer = await startViewer({ store: bad, port: 0 });
    try {
      const page = await fetch(`${viewer.url}runs/${fixture.graded}?sort=score`);
      expect(page.status).toBe(200);
    } finally {
      await viewer.close();
    }
  });

  it("typelm view reads TYPELM_LAB_URL without --store, and --store postgres://...; the printed lines hold no password", async () => {
    const secret = "cli-s3cret";
    const withPassword = url.replace("postgres@", `postgres:${secret}@`);
    const cwd = mkdtempSync(join(tmpdir(), "typelm-view-pg-cli-"));
    try {
      for (const [args, env] of [[[], { TYPELM_LAB_URL: withPassword }], [["--store", withPassword], { TYPELM_LAB_URL: "" }]] as const) {
        const view = await startViewCli([...args, "--port", "0"], { cwd, env: { ...process.env, ...env } });
        const address = view.url;
        try {
          const html = await (await fetch(address)).text();
          expect(html).toContain(`data-run-id="${fixture.evalA}"`);
        } finally {
          await view.stop();
        }
        const { stdout, stderr } = view.output();
        expect(stderr).toContain(`Serving postgres://127.0.0.1:${server.port}/lab read-only`);
        expect(stdout + stderr).not.toContain(secret);
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 30000);

  it("a URL's password shows nowhere: not in the address line, the pages or an error", async () => {
    const secret = "s3cret-pw";
    const withPassword = url.replace("postgres@", `postgres:${secret}@`);
    expect(withPassword).toContain(secret);
    const viewer = await startViewer({ store: withPassword, port: 0 });
    try {
      expect(viewer.store).not.toContain(secret);
      expect(viewer.store).toContain(`127.0.0.1:${server.port}/lab`);
      const html = await (await fetch(viewer.url)).text();
      expect(html).toContain(`127.0.0.1:${server.port}/lab`);
      expect(html).not.toContain(secret);
      const missing = await (await fetch(`${viewer.url}runs/nothing`)).text();
      expect(missing).not.toContain(secret);
    } finally {
      await viewer.close();
    }
    const nowhere = withPassword.replace(/\/lab$/, "/no_such_database");
    const refused = await startViewer({ store: nowhere, port: 0 }).then(() => undefined, (e: unknown) => e as Error);
    expect(refused?.message).toContain("no_such_database");
    expect(refused?.message).not.toContain(secret);
    const empty = server.createDatabase(`empty${databases++}`).replace("postgres@", `postgres:${secret}@`);
    const notALab = await startViewer({ store: empty, port: 0 }).then(() => undefined, (e: unknown) => e as Error);
    expect(notALab?.message).toMatch(/^no lab at postgres:\/\/127\.0\.0\.1:\d+\/empty\d+: the database has no lab_runs table/);
    expect(notALab?.message).not.toContain(secret);
  });
});
