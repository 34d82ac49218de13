/**
 * MCPClient over Streamable HTTP against real MCP server processes on ports the system picks: the
 * "everything" reference server from its npm package, and the fixture server, which requires a
 * bearer token (sent as a header, never shown in errors).
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { MCPClient, type MCPTool } from "../../lib/index.js";
import { startEverythingHttp, startFixtureHttp, type HttpServer } from "../helpers/mcp-servers.js";

const byName = (tools: MCPTool[], name: string): MCPTool => tools.find((t) => t.name === name)!;

describe("the everything server over Streamable HTTP", () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startEverythingHttp();
  }, 60000);
  afterAll(async () => server.stop());

  test("lists its tools and calls echo and get-sum", async () => {
    const mcp = await MCPClient.connect({ url: server.url });
    try {
      const tools = await mcp.tools();
      expect(mcp.pid).toBeUndefined();
      expect(await byName(tools, "echo").invoke({ message: "over http" })).toEqual({ ok: true, value: "Echo: over http" });
      expect(await byName(tools, "get-sum").invoke({ a: 1, b: 2 })).toEqual({ ok: true, value: "The sum of 1 and 2 is 3." });
    } finally {
      await mcp.close();
    }
  }, 60000);
});

describe("the fixture server over Streamable HTTP, with a bearer token", () => {
  const token = "fixture-token-5f0c2d9e7a";
  let server: HttpServer;
  beforeAll(async () => {
    server = await startFixtureHttp(token);
  }, 60000);
  afterAll(async () => server.stop());

  test("the headers authenticate; isError and a throwing handler are error observations; timeouts too", async () => {
    const mcp = await MCPClient.connect({ url: server.url, headers: { Authorization: `Bearer ${token}` }, callTimeout: 1 });
    try {
      const tools = await mcp.tools();
      expect(await byName(tools, "order").invoke({ item: "cup", count: 2, price: 5 })).toEqual({ ok: true, value: "2 × cup = 10" });
      expect(await byName(tools, "refuse").invoke({})).toEqual({ ok: false, error: 'Tool "refuse" failed: the MCP server reported an error: the warehouse is closed' });
      expect((await byName(tools, "explode").invoke({})) as unknown).toMatchObject({ ok: false, error: expect.stringMatching(/kaboom/) });
      expect(await byName(tools, "slow").invoke({ ms: 30000 })).toEqual({
        ok: false, error: 'Tool "slow" failed: the MCP server answered with an error: no answer within 1 s (callTimeout)',
      });
    } finally {
      await mcp.close();
    }
  }, 60000);

  test("a wrong token fails to connect, and the error never shows the header's value", async () => {
    const wrong = "wrong-token-8d1e4b7c3a";
    let caught: unknown;
    try {
      await MCPClient.connect({ url: server.url, headers: { Authorization: `Bearer ${wrong}` } });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(Error);
    const text = `${(caught as Error).message} ${String((caught as Error).stack)}`;
    expect((caught as Error).message).toMatch(/^MCPClient could not connect to the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp: /);
    // The server's answer echoes the header and the bare token; the error keeps the answer with both masked.
    expect((caught as Error).message).toContain("unauthorized: header [REDACTED]; token [REDACTED]");
    expect(text).not.toContain(wrong);
  }, 60000);
});
