/**
 * A real redis-server for tests, on a free loopback port, with persistence off. Without the binary
 * the Redis suites are skipped with an install hint; under CI=true a missing binary is a failure.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { Redis } from "ioredis";

export const REDIS_INSTALL_HINT = "apt-get install -y --no-install-recommends redis-server";

export function redisServerInstalled(): boolean {
  const probe = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return probe.error === undefined && probe.status === 0;
}

/** A loopback port free at this moment (the servers the tests start take one each). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export interface RedisTestServer {
  port: number;
  /** A namespace unique to this test run. */
  namespace: string;
  /** A client with an error listener (ioredis emits connection errors as events) and fail-fast retries. */
  client(): Redis;
  stop(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisTestServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const clients: Redis[] = [];
  const client = () => {
    const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    redis.on("error", () => undefined);
    clients.push(redis);
    return redis;
  };
  const stop = async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
  // Wait for the port with plain sockets (an ioredis client refused mid-connect keeps a timer alive),
  // then require a PONG from a real client.
  const deadline = Date.now() + 5000;
  while (!(await portOpen(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`redis-server on port ${port} did not start listening within 5 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const pong = await client().ping();
  if (pong !== "PONG") {
    await stop();
    throw new Error(`redis-server on port ${port}: expected PONG, received ${pong}`);
  }
  return { port, namespace: `typelm-test:${randomUUID()}`, client, stop };
}
