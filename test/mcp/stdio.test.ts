/**
 * MCPClient over stdio against real MCP server processes: the fixture server (isError, a throwing
 * handler, a slow tool, images, env and cwd) and the "everything" reference server from its package.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { tmpdir } from "node:os";
import { realpathSync } from "node:fs";
import { MCPClient, type MCPTool } from "../../lib/index.js";
import { EVERYTHING, FIXTURE, isAlive } from "../helpers/mcp-servers.js";

const byName = (tools: MCPTool[], name: string): MCPTool => {
  const found = tools.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(", ")}`);
  return found;
};

describe("the fixture server over stdio", () => {
  let mcp: MCPClient;
  let tools: MCPTool[];
  const cwd = realpathSync(tmpdir());
  beforeAll(async () => {
    mcp = await MCPClient.connect({ command: process.execPath, args: [FIXTURE, "stdio"], env: { MCP_FIXTURE_VAR: "from-the-test" }, cwd, callTimeout: 1 });
    tools = await mcp.tools();
  }, 60000);
  afterAll(async () => mcp.close());

  test("tools() lists every server tool with its description", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(["either", "explode", "order", "picture", "refuse", "slow", "where"]);
    expect(byName(tools, "order").description).toBe("Price an order.");
  });

  test("a call's text content is the observation", async () => {
    const outcome = await byName(tools, "order").invoke({ item: "pen", count: 3, price: 2, size: "large", gift: true, tags: ["a", "b"], address: { city: "Oslo" } });
    expect(outcome).toEqual({ ok: true, value: "3 × pen (large) = 6, gift [a,b] to Oslo" });
  });

  test("the zod input follows the server's schema: required, integers, enums, arrays, nested objects", async () => {
    const order = byName(tools, "order");
    const bad = async (args: unknown) => (await order.invoke(args)) as { ok: false; error: string };
    expect((await bad({ item: "pen", price: 2 })).error).toMatch(/count/);
    expect((await bad({ item: "pen", count: 1.5, price: 2 })).error).toMatch(/count/);
    expect((await bad({ item: "pen", count: 1, price: 2, size: "huge" })).error).toMatch(/size/);
    expect((await bad({ item: "pen", count: 1, price: 2, tags: [1] })).error).toMatch(/tags/);
    expect((await bad({ item: "pen", count: 1, price: 2, address: { zip: "1" } })).error).toMatch(/address\.city/);
    const schema = order.jsonSchema();
    expect(schema.required.sort()).toEqual(["count", "item", "price"]);
    expect(schema.properties.item).toMatchObject({ type: "string", description: "What to buy" });
    expect(schema.properties.count).toMatchObject({ type: "integer" });
    expect(schema.properties.size).toMatchObject({ enum: ["small", "large"] });
  });

  test("an untranslated construct (a type list) accepts any value, with a note, and the server still decides", async () => {
    const either = byName(tools, "either");
    expect(either.notes).toEqual(['value: a type list ["number","string"] is not translated; any value is accepted here and the server checks it']);
    expect(await either.invoke({ value: 4 })).toEqual({ ok: true, value: "got number 4" });
    const refused = await either.invoke({ value: true });
    expect(refused.ok).toBe(false);
  });

  test("an isError result is an error observation with the server's text", async () => {
    expect(await byName(tools, "refuse").invoke({})).toEqual({ ok: false, error: 'Tool "refuse" failed: the MCP server reported an error: the warehouse is closed' });
  });

  test("a handler that throws is an error observation, and the connection still works", async () => {
    const outcome = await byName(tools, "explode").invoke({});
    expect(outcome.ok).toBe(false);
    expect((outcome as { error: string }).error).toMatch(/kaboom in the handler/);
    expect((await byName(tools, "order").invoke({ item: "a", count: 1, price: 1 })).ok).toBe(true);
  });

  test("a call past callTimeout is an error observation; the connection still works", async () => {
    const outcome = await byName(tools, "slow").invoke({ ms: 30000 });
    expect(outcome).toEqual({ ok: false, error: 'Tool "slow" failed: the MCP server answered with an error: no answer within 1 s (callTimeout)' });
    expect(await byName(tools, "slow").invoke({ ms: 1 })).toEqual({ ok: true, value: "finally" });
  });

  test("images are described with their type and size", async () => {
    expect(await byName(tools, "picture").invoke({})).toEqual({ ok: true, value: "a dot\n[image image/png, 4 bytes]" });
  });

  test("env and cwd reach the child", async () => {
    const outcome = (await byName(tools, "where").invoke({})) as { ok: true; value: string };
    const seen = JSON.parse(outcome.value) as { cwd: string; variable: string; pid: number };
    expect({ cwd: seen.cwd, variable: seen.variable, pid: seen.pid }).toEqual({ cwd, variable: "from-the-test", pid: mcp.pid });
  });
});

describe("close()", () => {
  test("ends the stdio child: the process is gone, and later calls are error observations", async () => {
    const mcp = await MCPClient.connect({ command: process.execPath, args: [FIXTURE, "stdio"] });
    const tools = await mcp.tools();
    const pid = mcp.pid!;
    expect(isAlive(pid)).toBe(true);
    await mcp.close();
    expect(isAlive(pid)).toBe(false);
    const after = await tools[0]!.invoke({});
    expect(after.ok).toBe(false);
    await mcp.close();
    await expect(mcp.tools()).rejects.toThrow("This MCPClient is closed");
  }, 60000);

  test("a command that is not a server fails to connect with a clear error, leaving no process", async () => {
    await expect(MCPClient.connect({ command: process.execPath, args: ["-e", "console.error('not an MCP server'); process.exit(3)"] })).rejects.toThrow(
      /MCPClient could not connect to the MCP server `.*node -e.*; its stderr ended with: not an MCP server$/s,
    );
  }, 60000);
});

describe("the everything server (its npm package) over stdio", () => {
  test("lists its tools and calls echo, get-sum and get-tiny-image", async () => {
    const mcp = await MCPClient.connect({ command: process.execPath, args: [EVERYTHING, "stdio"] });
    try {
      const tools = await mcp.tools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]));
      expect(await byName(tools, "echo").invoke({ message: "hello" })).toEqual({ ok: true, value: "Echo: hello" });
      expect(await byName(tools, "get-sum").invoke({ a: 2, b: 40 })).toEqual({ ok: true, value: "The sum of 2 and 40 is 42." });
      expect((await byName(tools, "get-sum").invoke({ a: "2", b: 40 })).ok).toBe(false);
      const image = (await byName(tools, "get-tiny-image").invoke({})) as { ok: true; value: string };
      expect(image.value).toMatch(/\[image image\/png, \d+ bytes\]/);
    } finally {
      await mcp.close();
    }
  }, 60000);
});
