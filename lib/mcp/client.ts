/**
 * `MCPClient`: a connection to one MCP server, over stdio (a child process typelm starts) or
 * Streamable HTTP (a URL, with headers for auth). `tools()` lists the server's tools as typelm `Tool`s
 * an agent can call; `close()` ends the session and, for stdio, the child process. The MCP SDK is an
 * optional peer loaded by `connect` (with session.ts, which checks the options, starts the transport and
 * does the session's work behind the async methods), never at `import "typelm"`.
 */
import { ConfigurationError } from "../errors.js";
import type { MCPConnectOptions } from "./options.js";
import type { MCPToolResult } from "./result.js";
import type { SdkClient, SdkTransport } from "./session.js";
import type { MCPTool } from "./tool.js";

/** A connection to one MCP server. `await MCPClient.connect({ command, args })` or `({ url, headers })`; `await client.close()` when done. */
export class MCPClient {
  private closed = false;

  private constructor(
    private readonly client: SdkClient,
    private readonly transport: SdkTransport,
    private readonly callTimeoutSeconds: number,
    /** The server process for stdio, undefined for HTTP. */
    readonly pid: number | undefined,
  ) {}

  /**
   * Starts (stdio) or reaches (Streamable HTTP) the server and completes the MCP handshake. Throws a
   * ConfigurationError when `@modelcontextprotocol/sdk` is not installed, or an Error naming the
   * server when it cannot be started or reached (header values masked).
   */
  static async connect(options: MCPConnectOptions): Promise<MCPClient> {
    const { connectSession } = await import("./session.js");
    const { client, transport, callTimeoutSeconds } = await connectSession(options);
    return new MCPClient(client, transport, callTimeoutSeconds, transport.pid ?? undefined);
  }

  /** The server's tools (all pages of `tools/list`) as typelm `Tool`s; each call times out after `callTimeout` seconds. */
  async tools(): Promise<MCPTool[]> {
    this.checkOpen();
    const { serverTools } = await import("./session.js");
    return serverTools(this.client, this.callTimeoutSeconds * 1000, (name, args, ms) => this.callTool(name, args, ms));
  }

  private async callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<MCPToolResult> {
    if (this.closed) throw new Error("the MCP client is closed");
    const { callServerTool } = await import("./session.js");
    return callServerTool(this.client, name, args, timeoutMs);
  }

  private checkOpen(): void {
    if (this.closed) throw new ConfigurationError("This MCPClient is closed; connect again to use the server");
  }

  /** Ends the session; for stdio, ends the server process and waits until it is gone. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const { closeSession } = await import("./session.js");
    await closeSession(this.client, this.transport, this.pid);
  }
}
