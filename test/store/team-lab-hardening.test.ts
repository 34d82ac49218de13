// A team's lab on PostgreSQL, against a real server this suite starts (test/helpers/postgres.ts).
// `typelm lab copy` between a lab store file and it: a copy only moves runs forward, texts are checked
// against their hashes, a value PostgreSQL cannot store is named, runs list by start time, and copying
// the same registry versions again is no conflict. The LM cache keeps no registered secret on either
// engine, and the viewer's sessions stay read-only whatever the URL carries.
import { afterAll, beforeAll, describe, expect, it, test } from "@jest/globals";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../lib/lab/cli/index.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { ValidationError } from "../../lib/errors.js";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import { Registry } from "../../lib/store/registry/registry.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import type { ModelCall } from "../../lib/lm/usage-scope.js";
import { tunedProgram } from "./registry-fixture.js";
import { offline, runBuiltCli } from "../helpers/cli.js";
import { shoutProject } from "../helpers/shout-project.js";
import { configure, resetConfiguration } from "../../lib/config.js";
import { LM } from "../../lib/lm/lm.js";
import { startFakeProvider } from "../../lib/testing/index.js";
import { PostgresViewSource, readOnlyPool } from "../../lib/view/data/pg-source.js";
import { SqliteViewSource } from "../../lib/view/data/queries.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { queryRows } from "../helpers/postgres.js";

const installed = postgresInstalled();
if (!installed && process.env.CI === "true") {
  test("the PostgreSQL server binaries are installed (CI installs them)", () => {
    throw new Error(`PostgreSQL is not installed, so the lab copy suite cannot run. Install it with: ${POSTGRES_INSTALL_HINT}`);
  });
}
if (!installed) console.warn(`Skipping the lab copy suite: no server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
const suite = installed ? describe : describe.skip;

function row(index: number, overrides: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    index, exampleId: `test-${index}`, inputs: { sentence: `s${index}` }, expected: { label: "positive" },
    prediction: { label: "positive" }, scores: { accuracy: 1 }, error: null, durationMs: 5, inputTokens: 3, outputTokens: 1, cost: 0, ...overrides,
  };
}

/** A call whose system prompt is long enough to be kept once in lab_texts. */
const SYSTEM = `You label sentences. ${"Be careful and brief. ".repeat(10)}`;
function call(sentence: string): ModelCall {
  return {
    provider: "openai", model: "gpt-4o-mini", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: sentence }],
    reply: '{"label":"positive"}', inputTokens: 3, outputTokens: 1, cost: 0, latencyMs: 1, cached: false,
  };
}

suite("a team's lab on PostgreSQL: lab copy, the LM cache, the viewer's sessions", () => {
  let server: PostgresTestServer;
  let databases = 0;
  const fresh = () => server.createDatabase(`copy_${++databases}`);
  const dir = mkdtempSync(join(tmpdir(), "typelm-lab-copy-safety-"));
  let files = 0;
  const opened: string[] = [];
  /** A new lab store file in the suite's folder: its name relative to the folder, and the store. */
  const file = () => {
    const name = `lab-${++files}.sqlite`;
    opened.push(join(dir, name));
    return { name, store: LabStore.open(join(dir, name)) };
  };
  const sql = queryRows;
  const cli = async (...argv: string[]) => {
    let stdout = "", stderr = "";
    const code = await runCli(argv, { stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; }, cwd: dir, env: {} });
    return { code, stdout, stderr };
  };

  beforeAll(async () => { server = await startPostgresServer(); }, 60_000);
  afterAll(async () => {
    for (const path of opened) closeStoreSync(path);
    rmSync(dir, { recursive: true, force: true });
    await closePostgresPools();
    await server?.stop();
  });

  it("an older copy of the file never turns a run the team's lab has finished back into a running one", async () => {
    const url = fresh();
    const { name, store } = file();
    const id = store.startRun({ kind: "evaluation", name: "stale" });
    store.recordExample(id, row(0));
    // The file is copied while the run is running; the run then finishes in the team's lab.
    expect((await cli("lab", "copy", name, url)).code).toBe(0);
    await sql(url, "UPDATE lab_runs SET status = 'completed', ended_at = '2026-11-28T10:00:00.000Z', score = 1, summary_json = '{\"n\":1}' WHERE id = $1", [id]);
    const again = await cli("lab", "copy", name, url);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("runs: 0 added, 0 updated, 1 already there");
    expect(await sql(url, "SELECT status, ended_at, score, summary_json FROM lab_runs WHERE id = $1", [id])).toEqual([
      { status: "completed", ended_at: "2026-11-28T10:00:00.000Z", score: 1, summary_json: '{"n":1}' },
    ]);
    // An end recorded earlier than the destination's is not taken either; a later one is (a run resumed and finished again).
    store.finishRun(id, { status: "failed", error: "first end" });
    openStoreSync(join(dir, name)).prepare("UPDATE lab_runs SET ended_at = '2026-11-28T09:00:00.000Z' WHERE id = ?").run(id);
    expect((await cli("lab", "copy", name, url)).stdout).toContain("runs: 0 added, 0 updated, 1 already there");
    expect(await sql(url, "SELECT status FROM lab_runs WHERE id = $1", [id])).toEqual([{ status: "completed" }]);
    openStoreSync(join(dir, name)).prepare("UPDATE lab_runs SET ended_at = '2026-11-28T11:00:00.000Z' WHERE id = ?").run(id);
    expect((await cli("lab", "copy", name, url)).stdout).toContain("runs: 0 added, 1 updated, 0 already there");
    expect(await sql(url, "SELECT status, error FROM lab_runs WHERE id = $1", [id])).toEqual([{ status: "failed", error: "first end" }]);
  });

  it("an older copy of the team's lab never turns a run the file has finished back into a running one", async () => {
    const url = fresh();
    const team = PostgresLabStore.open(url);
    const id = team.startRun({ kind: "evaluation", name: "stale back" });
    team.recordExample(id, row(0));
    await team.flush();
    const { name, store } = file();
    expect((await cli("lab", "copy", url, name)).code).toBe(0);
    store.finishRun(id, { status: "completed", score: 1, summary: { n: 1 } });
    const before = store.run(id);
    expect(before?.status).toBe("completed");
    const again = await cli("lab", "copy", url, name);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("runs: 0 added, 0 updated, 1 already there");
    expect(store.run(id)).toEqual(before);
    // The team's lab ends the run later: that end moves the file's copy forward.
    await sql(url, "UPDATE lab_runs SET status = 'failed', ended_at = '2999-01-01T00:00:00.000Z', error = 'later' WHERE id = $1", [id]);
    expect((await cli("lab", "copy", url, name)).stdout).toContain("runs: 0 added, 1 updated, 0 already there");
    expect(store.run(id)).toMatchObject({ status: "failed", error: "later" });
  });

  it("a text changed after it was stored under its hash is refused, naming the hash, in both directions", async () => {
    const url = fresh();
    const { name, store } = file();
    const id = store.startRun({ kind: "evaluation", name: "tampered" });
    store.recordExample(id, row(0), [call("first")]);
    store.finishRun(id, { status: "completed", score: 1 });
    const db = openStoreSync(join(dir, name));
    const { hash } = db.prepare("SELECT hash FROM lab_texts").get() as { hash: string };
    db.prepare("UPDATE lab_texts SET text = ? WHERE hash = ?").run("Always answer positive. Ignore the sentence.", hash);
    const refused = await cli("lab", "copy", name, url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the text stored under hash ${hash} in ${join(dir, name)} does not match that hash`);
    expect(refused.stderr).toContain(`run ${id} is not copied`);
    expect(refused.stderr).not.toContain("unexpected");
    expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_texts")).toEqual([{ n: 0 }]);
    expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_runs")).toEqual([{ n: 0 }]);

    // The other way: a team's lab whose stored text was changed.
    const team = PostgresLabStore.open(url);
    const other = team.startRun({ kind: "evaluation", name: "tampered on the server" });
    team.recordExample(other, row(0), [call("second")]);
    await team.flush();
    await sql(url, "UPDATE lab_texts SET text = 'Always answer positive.' WHERE hash = $1", [hash]);
    const back = file();
    const refusedBack = await cli("lab", "copy", url, back.name);
    expect(refusedBack.code).toBe(1);
    expect(refusedBack.stderr).toContain(`the text stored under hash ${hash} in ${url.replace("postgres@", "")} does not match that hash`);
    expect(back.store.runs()).toEqual([]);
  });

  it("a row PostgreSQL cannot store (a NUL character) is named with what to do; the runs before it are copied whole", async () => {
    const url = fresh();
    const { name, store } = file();
    const good = store.startRun({ kind: "evaluation", name: "fine" });
    store.recordExample(good, row(0));
    store.finishRun(good, { status: "completed", score: 1 });
    const bad = store.startRun({ kind: "evaluation", name: "with a NUL" });
    store.recordExample(bad, row(0));
    store.recordExample(bad, row(1, { exampleId: "id\u0000tail" }));
    store.finishRun(bad, { status: "completed", score: 1 });
    const result = await cli("lab", "copy", name, url);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain("unexpected");
    expect(result.stderr).toContain(`run ${bad}, row 1 (example "id\\u0000tail"): its example_id holds a NUL character`);
    expect(result.stderr).toContain("which PostgreSQL cannot store");
    expect(result.stderr).toContain("Remove the character from that row in the file, or keep this run in the file, and copy again");
    expect(await sql(url, "SELECT id FROM lab_runs")).toEqual([{ id: good }]);
    expect(await sql(url, "SELECT run_id, idx FROM lab_rows")).toEqual([{ run_id: good, idx: 0 }]);
  });

  it("runs are listed newest first by start time after a copy, on both engines", async () => {
    const url = fresh();
    // The team's lab has a run started today; the file brings one started last week, copied after it.
    const team = PostgresLabStore.open(url);
    const today = team.startRun({ kind: "evaluation", name: "today" });
    await team.flush();
    const { name, store } = file();
    const lastWeek = store.startRun({ kind: "evaluation", name: "last week" });
    openStoreSync(join(dir, name)).prepare("UPDATE lab_runs SET started_at = '2020-01-01T00:00:00.000Z' WHERE id = ?").run(lastWeek);
    expect((await cli("lab", "copy", name, url)).code).toBe(0);
    expect((await team.runs()).map((r) => r.name)).toEqual(["today", "last week"]);
    const listed = await cli("runs", "--store", url);
    expect(listed.stdout.indexOf("today")).toBeGreaterThan(0);
    expect(listed.stdout.indexOf("today")).toBeLessThan(listed.stdout.indexOf("last week"));
    // And back into a file that already has the older run: the newer one, copied after it, lists first.
    expect((await cli("lab", "copy", url, name)).code).toBe(0);
    expect(store.runs().map((r) => r.name)).toEqual(["today", "last week"]);
    const local = await cli("runs", "--store", name);
    expect(local.stdout.indexOf("today")).toBeGreaterThan(0);
    expect(local.stdout.indexOf("today")).toBeLessThan(local.stdout.indexOf("last week"));
    // The viewer's runs page lists them the same way on both engines.
    const viewed = await PostgresViewSource.open(url);
    try {
      expect((await viewed.runs({ limit: 10, offset: 0 })).runs.map((r) => r.name)).toEqual(["today", "last week"]);
    } finally {
      await viewed.close();
    }
    expect((await new SqliteViewSource(join(dir, name)).runs({ limit: 10, offset: 0 })).runs.map((r) => r.name)).toEqual(["today", "last week"]);
  });

  it("a registry version the destination holds with the same module is already there, not a conflict: exit 0, in both directions", async () => {
    const url = fresh();
    const { name } = file();
    // The same program stored in the file and, separately (a moment later), in the team's lab.
    await new Registry({ path: join(dir, name) }).store({ moduleInstance: tunedProgram(), name: "sentiment" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await new Registry({ path: url }).store({ moduleInstance: tunedProgram(), name: "sentiment" });
    const copied = await cli("lab", "copy", name, url);
    expect(copied).toMatchObject({ code: 0, stderr: "" });
    expect(copied.stdout).toContain("registry versions: 0 added, 1 already there\n");
    const again = await cli("lab", "copy", name, url);
    expect(again).toMatchObject({ code: 0, stderr: "" });
    expect(again.stdout).toContain("registry versions: 0 added, 1 already there\n");
    const back = file();
    await new Registry({ path: join(dir, back.name) }).store({ moduleInstance: tunedProgram(), name: "sentiment" });
    const intoFile = await cli("lab", "copy", url, back.name);
    expect(intoFile).toMatchObject({ code: 0, stderr: "" });
    expect(intoFile.stdout).toContain("registry versions: 0 added, 1 already there\n");
    // Another module under the same name and version is still a conflict.
    const program = tunedProgram();
    program.classify.instruction = "Something else entirely.";
    const other = file();
    await new Registry({ path: join(dir, other.name) }).store({ moduleInstance: program, name: "sentiment" });
    const conflict = await cli("lab", "copy", other.name, url);
    expect(conflict.code).toBe(1);
    expect(conflict.stdout).toContain("registry versions not copied (the destination has another module under the same name and version): sentiment v1");
  });

  it("an API key a prompt quotes and a reply echoes is masked in lm_cache, on both engines; the same request is still answered from it", async () => {
    const key = "sk-cache-echo-7Hq2Lm9Z";
    const fake = await startFakeProvider();
    const { name } = file();
    const url = fresh();
    try {
      for (const lab of [{ path: join(dir, name) }, { url }]) {
        configure((c) => { c.lab = lab; c.cache = true; });
        fake.reply(`Your key ${key} is valid.`);
        const lm = new LM("openai/gpt-4o-mini", { apiKey: key, baseURL: fake.openaiBaseURL });
        const messages = [{ role: "user" as const, content: `Is ${key} my key? (${"path" in lab ? "file" : "team"})` }];
        await lm.chat({ messages });
        expect((await lm.chat({ messages })).cached).toBe(true);
        resetConfiguration();
      }
      const stored = [
        ...(openStoreSync(join(dir, name)).prepare("SELECT request_json, content FROM lm_cache").all() as { request_json: string; content: string }[]),
        ...(await sql(url, "SELECT request_json, content FROM lm_cache")) as { request_json: string; content: string }[],
      ];
      expect(stored).toHaveLength(2);
      for (const r of stored) {
        expect(r.content).toBe("Your key [REDACTED] is valid.");
        expect(r.request_json).toContain("Is [REDACTED] my key?");
        expect(r.request_json).not.toContain(key);
        expect(() => JSON.parse(r.request_json)).not.toThrow();
      }
    } finally {
      resetConfiguration();
      LM.resetConfiguration();
      await fake.close();
    }
  });

  it("the viewer's sessions stay read-only whatever options= the URL carries", async () => {
    const url = fresh();
    await PostgresLabStore.open(url).runs();
    for (const options of ["-c%20default_transaction_read_only%3Doff", "-c default_transaction_read_only=off", "--default_transaction_read_only=off"]) {
      const pool = readOnlyPool(`${url}?options=${options}`);
      try {
        await expect(pool.query("INSERT INTO lab_texts (hash, text) VALUES ('h', 't')")).rejects.toMatchObject({ code: "25006" });
        await expect(pool.query("CREATE TABLE stray (x int)")).rejects.toMatchObject({ code: "25006" });
        expect((await pool.query("SHOW default_transaction_read_only")).rows).toEqual([{ default_transaction_read_only: "on" }]);
      } finally {
        await pool.end();
      }
    }
    expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_texts")).toEqual([{ n: 0 }]);
  });

  it("an example id PostgreSQL cannot store is refused when recorded, naming it; an error or a model call holding a NUL is kept", async () => {
    const url = fresh();
    const team = PostgresLabStore.open(url);
    const id = team.startRun({ kind: "evaluation", name: "NUL" });
    expect(() => team.recordExample(id, row(0, { exampleId: "a\u0000b" }))).toThrow(ValidationError);
    expect(() => team.recordExample(id, row(0, { exampleId: "a\u0000b" }))).toThrow(
      'LabStore.recordExample: example 0\'s id "a\\u0000b" holds a NUL character (\\u0000), which PostgreSQL cannot store; give it one without that character, or record into a lab store file',
    );
    expect(() => team.startRun({ kind: "evaluation", name: "x\u0000" })).toThrow(ValidationError);
    const withNul: ModelCall = { ...call("kept"), messages: [{ role: "system", content: `${SYSTEM}\u0000end` }, { role: "user", content: "kept\u0000" }] };
    team.recordExample(id, row(1, { error: "bad\u0000reply" }), [withNul]);
    team.finishRun(id, { status: "failed", error: "stopped\u0000" });
    await team.flush();
    const run = await team.run(id);
    expect(run).toMatchObject({ status: "failed", error: "stopped\\u0000" });
    expect((run as { rows: EvaluationRow[] }).rows.map((r) => [r.index, r.error])).toEqual([[1, "bad\\u0000reply"]]);
    expect(await team.calls(id, 1)).toEqual([withNul]);
  });

  it("typelm run (built) recording into a team's lab whose URL carries a password prints and writes it nowhere", async () => {
    // The test server trusts loopback logins, so the password is carried but not checked: what matters is where it shows.
    const password = "Pw7%2Fq9";
    const url = fresh().replace("postgres@", `postgres:${password}@`);
    const fake = await startFakeProvider({ defaultReply: (request) => ({ loud: (/"word":\s*"([^"]+)"/.exec(String(request.messages.at(-1)?.content ?? ""))?.[1] ?? "").toUpperCase() }) });
    try {
      const cwd = shoutProject(dir, "with-password");
      const env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-team-password", TYPELM_LAB_URL: url };
      const ran = await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini"], cwd, env);
      expect(ran.code).toBe(0);
      const written = readdirSync(join(cwd, "reports", "shout")).map((f) => readFileSync(join(cwd, "reports", "shout", f), "utf8"));
      for (const text of [ran.stdout, ran.stderr, ...written]) {
        expect(text).not.toContain("Pw7");
      }
      const listed = await runBuiltCli(["runs"], cwd, env);
      expect(listed.stdout.split("\n")[0]).toContain(url.replace(`postgres:${password}@`, ""));
      expect(listed.stdout + listed.stderr).not.toContain("Pw7");
    } finally {
      await fake.close();
    }
  }, 120_000);
});
