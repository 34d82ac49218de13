/**
 * A PostgreSQL server for `bench:evaluate` on a free loopback port, in a temporary data folder, with
 * the server's default durability (fsync and synchronous commits on), started as the tests start
 * theirs (under root as `nobody`: PostgreSQL refuses root). Without the server binaries (Debian's
 * `postgresql` package) the measurement is skipped with the reason.
 */
import { POSTGRES_INSTALL_HINT, postgresBinDir, startPostgresServer } from "../test/helpers/postgres.js";

export interface BenchPostgres {
  url: string;
  stop(): void;
}

/** Starts a server, or returns why it cannot (no binaries, initdb or pg_ctl failed). */
export async function startBenchPostgres(): Promise<BenchPostgres | string> {
  if (postgresBinDir() === undefined) return `no PostgreSQL server binaries found (install them with: ${POSTGRES_INSTALL_HINT})`;
  try {
    const server = await startPostgresServer({ durable: true });
    return { url: server.url(), stop: () => void server.stop() };
  } catch (error) {
    return (error as Error).message;
  }
}
