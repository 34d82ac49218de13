// The least permissions a team's lab needs, as docs/team-lab.md sets them up, against a real server
// this suite starts (test/helpers/postgres.ts): the owner creates the tables on the first use; a
// writer with SELECT, INSERT and UPDATE does everything else; a read-only role reads.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import pg from "pg";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copyLab } from "../../lib/store/copy/lab-copy.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { PostgresLMCacheTable } from "../../lib/store/pg-lm-cache.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import { Registry } from "../../lib/store/registry/registry.js";
import { startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { requirePostgres, row, trial } from "./lab-engines.js";
import { tunedProgram } from "./registry-fixture.js";

const suite = requirePostgres("the lab's database roles suite") ? describe : describe.skip;

suite("a team's lab with least-permission roles", () => {
  let server: PostgresTestServer;
  const dir = mkdtempSync(join(tmpdir(), "typelm-roles-"));
  const as = (role: string) => `postgres://${role}@127.0.0.1:${server.port}/team_lab`;
  const admin = async (database: string, ...statements: string[]) => {
    const client = new pg.Client(server.url(database));
    await client.connect();
    try {
      for (const s of statements) await client.query(s);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    server = await startPostgresServer();
    // What docs/team-lab.md has a database administrator run.
    await admin("postgres",
      "CREATE ROLE typelm_owner LOGIN", "CREATE ROLE typelm_writer LOGIN", "CREATE ROLE typelm_viewer LOGIN",
      "CREATE DATABASE team_lab OWNER typelm_owner");
    await admin("team_lab", "ALTER SCHEMA public OWNER TO typelm_owner", "REVOKE CREATE ON SCHEMA public FROM PUBLIC");
  }, 60_000);
  afterAll(async () => {
    await closePostgresPools();
    closeStoreSync(join(dir, "local.sqlite"));
    rmSync(dir, { recursive: true, force: true });
    await server?.stop();
  });

  it("the owner creates the tables on first use; afterwards a writer with SELECT, INSERT, UPDATE records, stores, caches and copies; the viewer reads", async () => {
    // Before the tables exist, the writer cannot make them: the error says the user may need to create tables.
    await expect(PostgresLabStore.open(as("typelm_writer")).runs()).rejects.toThrow(/Cannot open the PostgreSQL lab store at .*permission denied for schema public.*may create tables/s);
    await closePostgresPools();

    expect(await PostgresLabStore.open(as("typelm_owner")).runs()).toEqual([]);
    await admin("team_lab",
      "GRANT USAGE ON SCHEMA public TO typelm_writer, typelm_viewer",
      "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO typelm_writer",
      "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO typelm_writer",
      "GRANT SELECT ON ALL TABLES IN SCHEMA public TO typelm_viewer",
      "ALTER DEFAULT PRIVILEGES FOR ROLE typelm_owner IN SCHEMA public GRANT SELECT, INSERT, UPDATE ON TABLES TO typelm_writer",
      "ALTER DEFAULT PRIVILEGES FOR ROLE typelm_owner IN SCHEMA public GRANT USAGE ON SEQUENCES TO typelm_writer",
      "ALTER DEFAULT PRIVILEGES FOR ROLE typelm_owner IN SCHEMA public GRANT SELECT ON TABLES TO typelm_viewer");

    const writer = PostgresLabStore.open(as("typelm_writer"));
    const id = writer.startRun({ kind: "evaluation", name: "by the writer" });
    for (const i of [0, 1, 2]) writer.recordExample(id, row(i));
    writer.recordBatch(id, { batchId: "b1", provider: "openai", model: "gpt-4o-mini", endpoint: "https://api.openai.com/v1", round: 0, customIds: ["x"] });
    writer.recordBatch(id, { batchId: "b1", provider: "openai", model: "gpt-4o-mini", endpoint: "https://api.openai.com/v1", round: 1, customIds: ["y"] });
    writer.finishBatch(id, "b1", "completed");
    writer.finishRun(id, { status: "completed", score: 0.5 });
    const opt = writer.startRun({ kind: "optimization", name: "resumed" });
    writer.recordTrial(opt, trial(0));
    writer.finishRun(opt, { status: "failed", error: "killed" });
    writer.reopenRun(opt);
    await writer.flush();
    const registry = new Registry({ path: as("typelm_writer") });
    expect((await registry.store({ moduleInstance: tunedProgram(), name: "sentiment" })).version).toBe(1);
    expect((await registry.store({ moduleInstance: tunedProgram(), name: "sentiment" })).version).toBe(2);
    const cache = new PostgresLMCacheTable(as("typelm_writer"));
    const reply = { key: "k", provider: "openai", model: "m", requestJson: "{}", content: "hi", inputTokens: 1, outputTokens: 1, finishReason: "stop", createdAt: "t" };
    await cache.put(reply);
    await cache.put({ ...reply, content: "hi again" });
    expect((await cache.get("k"))?.content).toBe("hi again");

    // A local lab into the team's, twice (the second time updates the run that ended since).
    const local = LabStore.open(join(dir, "local.sqlite"));
    const mine = local.startRun({ kind: "evaluation", name: "on a laptop" });
    local.recordExample(mine, row(0), [{
      provider: "openai", model: "m", messages: [{ role: "system", content: "Answer in one word. ".repeat(8) }, { role: "user", content: "Hi" }],
      reply: "Hello", inputTokens: 30, outputTokens: 1, cost: null, latencyMs: 5, cached: false,
    }]);
    expect(await copyLab(join(dir, "local.sqlite"), as("typelm_writer"))).toMatchObject({ runs: { added: 1 }, rows: 1, texts: 1 });
    local.finishRun(mine, { status: "completed", score: 1 });
    expect((await copyLab(join(dir, "local.sqlite"), as("typelm_writer"))).runs.updated).toBe(1);

    // The viewer reads everything and writes nothing.
    const viewer = PostgresLabStore.open(as("typelm_viewer"));
    expect((await viewer.runs()).map((r) => [r.name, r.status])).toEqual([["on a laptop", "completed"], ["resumed", "running"], ["by the writer", "completed"]]);
    expect((await viewer.rows(id)).map((r) => r.index)).toEqual([0, 1, 2]);
    expect((await viewer.batches(id)).map((b) => [b.round, b.status])).toEqual([[1, "completed"]]);
    expect((await new Registry({ path: as("typelm_viewer") }).versions("sentiment")).map((v) => v.version)).toEqual([1, 2]);
    // A table a later migration makes (as the owner) is the writer's and the viewer's too.
    const client = new pg.Client(as("typelm_owner"));
    await client.connect();
    await client.query("CREATE TABLE lab_later (seq BIGSERIAL PRIMARY KEY, note TEXT)").finally(() => client.end());
    const later = new pg.Client(as("typelm_writer"));
    await later.connect();
    await later.query("INSERT INTO lab_later (note) VALUES ('written')").finally(() => later.end());
    const seen = new pg.Client(as("typelm_viewer"));
    await seen.connect();
    expect((await seen.query("SELECT note FROM lab_later").finally(() => seen.end())).rows).toEqual([{ note: "written" }]);

    viewer.startRun({ kind: "evaluation", name: "not allowed" });
    await expect(viewer.flush()).rejects.toThrow(/permission denied for table lab_runs/);
  });
});
