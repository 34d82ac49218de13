/**
 * `typelm view` on the command line: it prints the address it serves on 127.0.0.1, answers there,
 * stops cleanly on SIGTERM, and rejects bad options with a message; `import "typelm"` never reaches
 * the viewer's code. The built command needs `npm run build` first (CI does).
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { migrate, STORE_MIGRATIONS } from "../../lib/store/db.js";
import { startViewer } from "../../lib/view/server.js";
import { runCliHere, startViewCli } from "../helpers/cli.js";
import { buildFixture, removeFixtures } from "./fixture.js";

afterAll(() => removeFixtures());

describe("typelm view", () => {
  it("prints its address on 127.0.0.1, serves the runs there, and stops on SIGTERM", async () => {
    const fixture = await buildFixture();
    const view = await startViewCli(["--store", fixture.path, "--port", "0"]);
    const url = view.url;
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`data-run-id="${fixture.evalA}"`);
      // A name other than the loopback's (DNS rebinding) is refused.
      const port = new URL(url).port;
      const { request } = await import("node:http");
      const status = await new Promise<number>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path: "/", headers: { host: `attacker.example:${port}` } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); })
          .on("error", reject).end();
      });
      expect(status).toBe(403);
    } finally {
      expect(await view.stop()).toEqual({ code: 0, signal: null });
      expect(view.output().stderr).toContain(`Serving ${fixture.path} read-only`);
    }
  }, 30000);

  it("names what is wrong with its options", async () => {
    const cwd = dirname((await buildFixture()).path);
    let out = await runCliHere(["view", "--port", "http"], cwd);
    expect(out).toMatchObject({ code: 2 });
    expect(out.stderr).toContain('--port expects a whole number; received "http"');
    out = await runCliHere(["view", "--port", "70000"], cwd);
    expect(out.stderr).toContain("--port expects a port number 0-65535; received 70000");
    out = await runCliHere(["view", "--store", "missing.sqlite"], cwd);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`no lab store at ${join(cwd, "missing.sqlite")}`);
    out = await runCliHere(["runs", "--port", "5000"], cwd);
    expect(out.stderr).toContain("--port is not an option of runs: it goes with typelm view");
    out = await runCliHere(["view", "extra"], cwd);
    expect(out.stderr).toContain("view takes no arguments");
  });

  it("import \"typelm\" loads no module that holds the viewer's code", () => {
    // The bundle's entry and the chunks it imports statically (what Node loads at import); the viewer
    // may sit only in chunks reached through a dynamic import().
    const root = join(process.cwd(), "dist/pkg");
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file) || !existsSync(file)) return;
      seen.add(file);
      const code = readFileSync(file, "utf8");
      for (const m of code.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.[^"]+)"|^import\s*"(\.[^"]+)"/gm)) visit(join(dirname(file), m[1] ?? m[2]!));
    };
    visit(join(root, "index.js"));
    expect(seen.size).toBeGreaterThan(0);
    const withViewer = [...seen].filter((f) => /\b(SqliteViewSource|PostgresViewSource|IntervalWorker) ?= ?class\b|class (SqliteViewSource|PostgresViewSource|IntervalWorker)\b|typelm view: |view-interval-worker/.test(readFileSync(f, "utf8")));
    expect(withViewer).toEqual([]);
    // The interval worker is a file of its own in the package, beside the entry points.
    expect(existsSync(join(root, "view-interval-worker.js"))).toBe(true);
    // The command's chunk graph does hold it (so the search above would find it if it were eager).
    const all = [...new Set([join(root, "bin.js")])];
    const binSeen = new Set<string>();
    const visitAll = (file: string) => {
      if (binSeen.has(file) || !existsSync(file)) return;
      binSeen.add(file);
      for (const m of readFileSync(file, "utf8").matchAll(/"(\.\.?\/[^"]+\.js)"/g)) visitAll(join(dirname(file), m[1]!));
    };
    all.forEach(visitAll);
    for (const name of ["SqliteViewSource", "PostgresViewSource", "IntervalWorker"]) {
      expect([...binSeen].some((f) => new RegExp(`\\b${name} ?= ?class\\b|class ${name}\\b`).test(readFileSync(f, "utf8")))).toBe(true);
    }
  });

  it("reads a store written before model calls were recorded, and leaves it as it was (no migration)", async () => {
    const folder = mkdtempSync(join(tmpdir(), "typelm-view-old-"));
    const path = join(folder, "lab.sqlite");
    const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
    const db = new Database(path);
    const older = STORE_MIGRATIONS.filter((m) => m.name < "006");
    migrate(db, older);
    db.prepare(`INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('old-run', 'evaluation', 'old', 'completed', '2026-01-01T00:00:00Z', '{"metrics":["accuracy"]}', '{"metrics":{"accuracy":0.5}}')`).run();
    const insert = db.prepare(`INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost)
      VALUES ('old-run', ?, ?, '{"q":"x"}', '{"a":"y"}', NULL, ?, ?, 1, 1, 1, 0)`);
    insert.run(0, "e0", '{"accuracy":1}', null);
    insert.run(1, "e1", '{"accuracy":0}', "ProviderError: 500");
    db.close();
    const before = readFileSync(path);
    const viewer = await startViewer({ store: path, port: 0 });
    try {
      const row = await (await fetch(`${viewer.url}runs/old-run/rows/0`)).text();
      expect(row).toContain("This store records no model calls");
      const failed = await (await fetch(`${viewer.url}runs/old-run?failed=1`)).text();
      expect([...failed.matchAll(/<tr data-example-id="([^"]+)"/g)].map((m) => m[1])).toEqual(["e1"]);
      expect(await (await fetch(`${viewer.url}api/runs/old-run/rows/0`)).json()).toMatchObject({ exampleId: "e0", calls: null });
    } finally {
      await viewer.close();
    }
    const check = new Database(path, { readonly: true });
    expect((check.prepare("SELECT name FROM schema_migrations ORDER BY name").all() as { name: string }[]).map((r) => r.name)).toEqual(older.map((m) => m.name));
    check.close();
    expect(readFileSync(path).equals(before)).toBe(true);
    rmSync(folder, { recursive: true, force: true });
  });
});
