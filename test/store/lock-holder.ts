import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";

const betterSqlite3 = createRequire(import.meta.url).resolve("better-sqlite3");

/**
 * Starts another process that opens `path` and holds its write lock (BEGIN EXCLUSIVE) until
 * released, so a test can meet a store locked by someone else. Resolves once the lock is held.
 */
export async function holdWriteLock(path: string): Promise<{ child: ChildProcess; release: () => Promise<void> }> {
  const script = `
    const Database = require(${JSON.stringify(betterSqlite3)});
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN EXCLUSIVE");
    process.stdout.write("locked\\n");
    process.stdin.on("data", () => { db.exec("ROLLBACK"); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((done, fail) => {
    child.stdout!.once("data", () => done());
    child.once("exit", (code) => fail(new Error(`lock holder exited early (${code})`)));
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  return {
    child,
    release: async () => {
      child.stdin!.write("release\n");
      await exited;
    },
  };
}
