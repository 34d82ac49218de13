/**
 * A PostgreSQL server for `bench:evaluate` on a free loopback port, in a temporary data folder, with
 * the server's default durability (fsync and synchronous commits on). PostgreSQL refuses to run as
 * root, so under root the server runs as `nobody`. Without the server binaries (Debian's `postgresql`
 * package) the measurement is skipped with the reason.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BenchPostgres {
  url: string;
  stop(): void;
}

/** Debian keeps initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, out of PATH. */
function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "pg_ctl"))).sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0]!, "bin");
  }
  const probe = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = probe.status === 0 ? probe.stdout.trim() : "";
  return dir !== "" && existsSync(join(dir, "pg_ctl")) ? dir : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a server, or returns why it cannot (no binaries, initdb or pg_ctl failed). */
export async function startBenchPostgres(): Promise<BenchPostgres | string> {
  const bin = binDir();
  if (bin === undefined) return "no PostgreSQL server binaries found (install them with: apt-get install -y --no-install-recommends postgresql)";
  const root = process.getuid?.() === 0;
  const folder = mkdtempSync(join(tmpdir(), "typelm-bench-pg-"));
  chmodSync(folder, 0o755);
  const data = join(folder, "data");
  const asServer = (command: string, args: string[]): string | undefined => {
    const [cmd, argv] = root ? ["runuser", ["-u", "nobody", "--", join(bin, command), ...args]] : [join(bin, command), args];
    const r = spawnSync(cmd, argv, { encoding: "utf8", cwd: folder });
    return r.status === 0 ? undefined : `${command} failed (${r.status}): ${(r.stderr || r.stdout || r.error?.message || "").trim()}`;
  };
  if (root) {
    const id = (flag: string) => Number(spawnSync("id", [flag, "nobody"], { encoding: "utf8" }).stdout.trim());
    chownSync(folder, id("-u"), id("-g"));
  }
  const port = await freePort();
  const failed = asServer("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]) ??
    asServer("pg_ctl", ["-D", data, "-l", join(folder, "server.log"), "-w", "-t", "30", "start", "-o", `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`]);
  if (failed !== undefined) {
    rmSync(folder, { recursive: true, force: true });
    return failed;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      asServer("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
