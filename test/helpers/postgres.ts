/**
 * A real PostgreSQL server for tests, on a free loopback port, in a temporary data folder with trust
 * authentication. PostgreSQL refuses to run as root, so under root the server runs as `nobody`
 * (the data folder is handed to it). Without the server binaries the suites are skipped with an
 * install hint; under CI=true a missing server is a failure.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis.js";

export const POSTGRES_INSTALL_HINT = "apt-get install -y --no-install-recommends postgresql";

/** The folder holding initdb and pg_ctl (Debian keeps them out of PATH), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "pg_ctl"))).sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0]!, "bin");
  }
  const probe = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = probe.status === 0 ? probe.stdout.trim() : "";
  return dir !== "" && existsSync(join(dir, "pg_ctl")) ? dir : undefined;
}

export function postgresInstalled(): boolean {
  return postgresBinDir() !== undefined;
}

export interface PostgresTestServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`; each call with a new name creates that database. */
  url(database?: string): string;
  /** Creates a fresh empty database and returns its URL. */
  createDatabase(name: string): string;
  stop(): Promise<void>;
}

/**
 * Starts a server (a few seconds: initdb, then pg_ctl start -w). Tests run it without fsync; a bench
 * that measures writes asks for the server's default durability (`durable: true`).
 */
export async function startPostgresServer(options: { durable?: boolean } = {}): Promise<PostgresTestServer> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error(`PostgreSQL server binaries not found. Install them with: ${POSTGRES_INSTALL_HINT}`);
  const root = process.getuid?.() === 0;
  const folder = mkdtempSync(join(tmpdir(), "typelm-pg-"));
  chmodSync(folder, 0o755);
  const data = join(folder, "data");
  const asServer = (command: string, args: string[]) => {
    const [cmd, argv] = root ? ["runuser", ["-u", "nobody", "--", join(bin, command), ...args]] : [join(bin, command), args];
    const r = spawnSync(cmd, argv, { encoding: "utf8", cwd: folder });
    if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.stdout || r.error?.message}`);
    return r.stdout;
  };
  if (root) chownSync(folder, uid("nobody"), gid("nobody"));
  const port = await freePort();
  try {
    asServer("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]);
    asServer("pg_ctl", [
      "-D", data, "-l", join(folder, "server.log"), "-w", "-t", "30", "start",
      "-o", `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1` + (options.durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"),
    ]);
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  const url = (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const psql = (sql: string) => {
    const r = spawnSync(join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  };
  return {
    port,
    url,
    createDatabase(name) {
      psql(`CREATE DATABASE "${name}"`);
      return url(name);
    },
    async stop() {
      try {
        asServer("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}

function uid(user: string): number {
  return Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim());
}

function gid(user: string): number {
  return Number(spawnSync("id", ["-g", user], { encoding: "utf8" }).stdout.trim());
}
