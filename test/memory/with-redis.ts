/**
 * `describe` for suites that need a real redis-server. Without the binary the suite's own tests are
 * registered as skipped (with an install hint); under CI=true a missing binary is a failure.
 */
import { afterAll, beforeAll, describe, it } from "@jest/globals";
import type { Redis } from "ioredis";
import { REDIS_INSTALL_HINT, type RedisTestServer, redisServerInstalled, startRedisServer } from "../helpers/redis.js";

export interface RedisContext {
  /** The shared client (valid inside tests). */
  redis(): Redis;
  /** Another connection to the same server (closed with the server), for writers that really interleave. */
  connect(): Redis;
  /** A namespace unique to this run; add a suffix per test to keep tests apart. */
  namespace(): string;
}

export function describeWithRedis(name: string, body: (ctx: RedisContext) => void): void {
  const installed = redisServerInstalled();
  if (!installed && process.env.CI === "true") {
    describe(name, () => {
      it("needs redis-server, which CI must install", () => {
        throw new Error(`redis-server is not installed; run: ${REDIS_INSTALL_HINT}`);
      });
    });
    return;
  }
  if (!installed) console.warn(`Skipping "${name}": redis-server is not installed. Install it with: ${REDIS_INSTALL_HINT}`);
  (installed ? describe : describe.skip)(name, () => {
    let server: RedisTestServer | undefined;
    let client: Redis | undefined;
    beforeAll(async () => {
      server = await startRedisServer();
      client = server.client();
    });
    afterAll(async () => {
      await server?.stop();
    });
    body({ redis: () => client!, connect: () => server!.client(), namespace: () => server!.namespace });
  });
}
