import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STORE_MIGRATIONS, closeStore, migrate, openStore } from "../../lib/store/db.js";
import { LMCacheTable } from "../../lib/store/lm-cache.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-store-"));
afterAll(async () => {
  await closeStore(join(dir, "a.sqlite"));
  await closeStore(join(dir, "nested/deeper/b.sqlite"));
  rmSync(dir, { recursive: true, force: true });
});

describe("openStore", () => {
  it("opens the file in WAL mode with the lm_cache table", async () => {
    const db = await openStore(join(dir, "a.sqlite"));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    const columns = (db.prepare("PRAGMA table_info(lm_cache)").all() as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(["key", "provider", "model", "request_json", "content", "input_tokens", "output_tokens", "created_at"]));
  });

  it("returns the same connection for the same file and creates missing folders", async () => {
    const path = join(dir, "nested/deeper/b.sqlite");
    const [a, b] = await Promise.all([openStore(path), openStore(path)]);
    expect(a).toBe(b);
  });

  it("applies each migration once, however often it is asked for", async () => {
    const db = await openStore(":memory:");
    const step = { name: "900_test_runs", sql: "CREATE TABLE test_runs (id INTEGER PRIMARY KEY)" };
    migrate(db, [step]);
    migrate(db, [step]); // would fail ("table exists") if it ran twice
    const names = (db.prepare("SELECT name FROM schema_migrations ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(["001_lm_cache", "002_lab_runs", "003_registry", "900_test_runs"]);
    expect(STORE_MIGRATIONS.map((m) => m.name)).toEqual(["001_lm_cache", "002_lab_runs", "003_registry"]);
    db.close();
  });

  it("raises a ConfigurationError naming the path when the file cannot be created", async () => {
    const file = join(dir, "plain-file");
    writeFileSync(file, "not a folder");
    await expect(openStore(join(file, "x.sqlite"))).rejects.toMatchObject({
      name: "ConfigurationError", message: expect.stringContaining(join(file, "x.sqlite")),
    });
  });
});

describe("LMCacheTable", () => {
  it("stores and reads back a row", async () => {
    const db = await openStore(":memory:");
    const table = new LMCacheTable(db);
    const row = {
      key: "k1", provider: "openai", model: "gpt-4o-mini", requestJson: "{}", content: "hi",
      inputTokens: 3, outputTokens: 1, finishReason: "stop", createdAt: "2026-11-21T00:00:00.000Z",
    };
    table.put(row);
    expect(table.get("k1")).toEqual(row);
    expect(table.get("missing")).toBeUndefined();
    expect(table.all()).toHaveLength(1);
    db.close();
  });
});
