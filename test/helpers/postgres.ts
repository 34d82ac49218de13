/**
 * A real PostgreSQL server for tests, on a free loopback port, in a temporary data folder with trust
 * authentication. PostgreSQL refuses to run as root, so under root the server runs as `nobody`
 * (the data folder is handed to it). Without the server binaries the suites are skipped with an
 * install hint; under CI=true a missing server is a failure.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
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
  let port = 0;
  try {
    initializedData(bin, root, data, asServer);
    // Chosen just before the start (not before the data folder is made) so that no other process has long to take it.
    port = await freePort();
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

const INITDB_ARGS = ["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"];

/**
 * Makes `data` a fresh cluster: a copy of one made by initdb once per machine (in the temporary folder,
 * named after the binaries, the user and initdb's options). initdb took 9.5 s on a busy 2-core machine,
 * for each of the suites that start a server; a copy takes a fraction of a second.
 */
function initializedData(bin: string, root: boolean, data: string, asServer: (command: string, args: string[]) => string): void {
  const key = createHash("sha256").update(JSON.stringify([bin, root ? "nobody" : process.getuid?.(), INITDB_ARGS])).digest("hex").slice(0, 16);
  const template = join(tmpdir(), `typelm-pg-template-${key}`);
  if (!existsSync(join(template, "PG_VERSION"))) {
    // Made beside it and renamed into place, so a template is complete or absent (another process may make one too).
    const making = mkdtempSync(`${template}-making-`);
    try {
      chmodSync(making, 0o755);
      if (root) chownSync(making, uid("nobody"), gid("nobody"));
      asServer("initdb", ["-D", join(making, "data"), ...INITDB_ARGS]);
      try {
        renameSync(join(making, "data"), template);
      } catch (error) {
        if (!existsSync(join(template, "PG_VERSION"))) throw error;
      }
    } finally {
      rmSync(making, { recursive: true, force: true });
    }
  }
  // -a keeps the owner (nobody, under root) and the 0700 mode the server insists on.
  const r = spawnSync("cp", ["-a", template, data], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`copying the initialized PostgreSQL data folder ${template} failed: ${r.stderr}`);
}

function uid(user: string): number {
  return Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim());
}

function gid(user: string): number {
  return Number(spawnSync("id", ["-g", user], { encoding: "utf8" }).stdout.trim());
}

/** The rows of one statement, on a connection of its own that is closed afterwards. */
export async function queryRows(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}
