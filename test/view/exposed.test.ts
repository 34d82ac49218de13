/**
 * The viewer on an address other machines may reach (`--host 0.0.0.0`, `::`, an interface's address)
 * keeps its Host check: it answers to the loopback names, the address it was bound to and, bound to a
 * wildcard, this machine's own addresses and host name, and refuses any other name (DNS rebinding);
 * the command warns that the address is not loopback.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { request } from "node:http";
import { hostname, networkInterfaces } from "node:os";
import { startViewer } from "../../lib/view/server.js";
import { startViewCli } from "../helpers/cli.js";
import { buildFixture, removeFixtures } from "./fixture.js";

afterAll(() => removeFixtures());

/** The status of GET / sent to `address`:`port` with the Host header `host`. */
function statusWithHost(address: string, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    request({ host: address, port, path: "/", headers: { host } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); })
      .on("error", reject).end();
  });
}

/** Whether this machine can listen on `address` (an IPv6 address where IPv6 is off cannot). */
async function canListen(address: string): Promise<boolean> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(0, address, () => s.close(() => resolve(true)));
  });
}

/** Resolves once `condition()` holds (checked every 50 ms, for at most 30 s). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((r) => setTimeout(r, 50));
}

describe("the viewer on a non-loopback address", () => {
  it("bound to 0.0.0.0 it still refuses a foreign Host, and answers to loopback names, its own addresses and host name", async () => {
    const fixture = await buildFixture();
    const viewer = await startViewer({ store: fixture.path, host: "0.0.0.0", port: 0 });
    try {
      const port = Number(new URL(viewer.url).port);
      expect(await statusWithHost("127.0.0.1", port, `attacker.example:${port}`)).toBe(403);
      expect(await statusWithHost("127.0.0.1", port, "attacker.example")).toBe(403);
      expect(await statusWithHost("127.0.0.1", port, `127.0.0.1.attacker.example:${port}`)).toBe(403);
      expect(await statusWithHost("127.0.0.1", port, `127.0.0.1:${port}`)).toBe(200);
      expect(await statusWithHost("127.0.0.1", port, `localhost:${port}`)).toBe(200);
      expect(await statusWithHost("127.0.0.1", port, `0.0.0.0:${port}`)).toBe(200);
      expect(await statusWithHost("127.0.0.1", port, `${hostname()}:${port}`)).toBe(200);
      const own = Object.values(networkInterfaces()).flatMap((l) => l ?? []).filter((a) => a.family === "IPv4" && !a.internal);
      for (const a of own) expect(await statusWithHost(a.address, port, `${a.address}:${port}`)).toBe(200);
    } finally {
      await viewer.close();
    }
  }, 60000);

  it("bound to :: or ::ffff:127.0.0.1 it refuses a foreign Host too", async () => {
    const fixture = await buildFixture();
    for (const host of ["::", "::ffff:127.0.0.1"]) {
      if (!(await canListen(host))) {
        console.warn(`This machine cannot listen on ${host} (no IPv6): that case is not checked here.`);
        continue;
      }
      const viewer = await startViewer({ store: fixture.path, host, port: 0 });
      try {
        const port = Number(new URL(viewer.url).port);
        expect(await statusWithHost("127.0.0.1", port, `attacker.example:${port}`)).toBe(403);
        if (host !== "::") expect(await statusWithHost("127.0.0.1", port, `[::ffff:127.0.0.1]:${port}`)).toBe(200);
        expect(await statusWithHost("127.0.0.1", port, `127.0.0.1:${port}`)).toBe(200);
        expect(await statusWithHost("127.0.0.1", port, `[::1]:${port}`)).toBe(200);
      } finally {
        await viewer.close();
      }
    }
  }, 60000);

  it("typelm view --host 0.0.0.0 warns that the address is not loopback; on 127.0.0.1 it does not", async () => {
    const fixture = await buildFixture();
    const exposed = await startViewCli(["--store", fixture.path, "--port", "0", "--host", "0.0.0.0"]);
    try {
      // The warning comes on standard error before the address on standard output; the pipes are read apart.
      await until(() => exposed.output().stderr.includes("Warning:"));
      expect(exposed.output().stderr).toContain("Warning: listening on 0.0.0.0, which other machines may reach");
    } finally {
      expect(await exposed.stop()).toEqual({ code: 0, signal: null });
    }
    const local = await startViewCli(["--store", fixture.path, "--port", "0"]);
    try {
      await until(() => local.output().stderr.includes("Serving"));
      expect(local.output().stderr).not.toContain("Warning");
    } finally {
      await local.stop();
    }
  }, 60000);
});
