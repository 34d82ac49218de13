/** MCPClient.connect's option checks: a ConfigurationError before any server is started or reached. */
import { describe, expect, it } from "@jest/globals";
import { ConfigurationError, MCPClient } from "../../lib/index.js";
import type { MCPConnectOptions } from "../../lib/index.js";

const NEITHER_OR_BOTH =
  "MCPClient.connect needs either `command` (a server started over stdio) or `url` (a Streamable HTTP server), not both nor neither";

describe("MCPClient.connect options", () => {
  it.each([
    ["neither command nor url", {}],
    ["both command and url", { command: "node", url: "http://127.0.0.1:9/mcp" }],
  ])("rejects %s with a ConfigurationError", async (_, options) => {
    const error = await MCPClient.connect(options as MCPConnectOptions).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(NEITHER_OR_BOTH);
  });

  it.each([0, -1, Number.NaN, "5"])("rejects callTimeout %p with a ConfigurationError naming it", async (callTimeout) => {
    const options = { url: "http://127.0.0.1:9/mcp", callTimeout } as unknown as MCPConnectOptions;
    const error = await MCPClient.connect(options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(`MCPClient callTimeout: expected a positive number of seconds, received ${String(callTimeout)}`);
  });
});
