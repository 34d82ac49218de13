/**
 * `MCPClient`: a connection to one MCP server, over stdio (a child process typelm starts) or
 * Streamable HTTP (a URL, with headers for auth). `tools()` lists the server's tools as typelm `Tool`s
 * an agent can call; `close()` ends the session and, for stdio, the child process. The MCP SDK is an
 * optional peer loaded by `connect`, never at `import "typelm"`.
 */
import { ConfigurationError } from "../errors.js";
import { redactString, registerSecret } from "../instrument/redact.js";
import { loadOptional } from "../optional.js";
import type { MCPConnectOptions, MCPHttpOptions, MCPStdioOptions } from "./options.js";
import type { MCPToolResult } from "./result.js";
import { MCPTool, type MCPToolDescription } from "./tool.js";

const DEFAULT_CALL_TIMEOUT_SECONDS = 60;
/** JSON-RPC code the SDK gives a request that ran past its timeout. */
const REQUEST_TIMEOUT_CODE = -32001;
/** How much of a stdio server's stderr a failed connection quotes. */
const STDERR_TAIL = 2000;
const FEATURE = "MCPClient";

/** The parts of the SDK's Client this module uses. */
interface SdkClient {
  connect(transport: unknown): Promise<void>;
  listTools(params?: { cursor?: string }, options?: { timeout?: number }): Promise<{ tools: MCPToolDescription[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }, schema?: unknown, options?: { timeout?: number }): Promise<unknown>;
  close(): Promise<void>;
}

interface SdkTransport {
  close(): Promise<void>;
  readonly pid?: number | null;
  readonly stderr?: NodeJS.ReadableStream | null;
}

function isStdio(options: MCPConnectOptions): options is MCPStdioOptions {
  return typeof (options as MCPStdioOptions).command === "string";
}

function checkOptions(options: MCPConnectOptions): number {
  const stdio = isStdio(options);
  const http = (options as MCPHttpOptions).url !== undefined;
  if (stdio === http) {
    throw new ConfigurationError("MCPClient.connect needs either `command` (a server started over stdio) or `url` (a Streamable HTTP server), not both nor neither");
  }
  const seconds = options.callTimeout ?? DEFAULT_CALL_TIMEOUT_SECONDS;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) {
    throw new ConfigurationError(`MCPClient callTimeout: expected a positive number of seconds, received ${String(seconds)}`);
  }
  return seconds;
}

/** Registers each header value as a secret, and the credential after a scheme ("Bearer <token>") on its own. */
function registerHeaderSecrets(headers: Record<string, string>): void {
  for (const value of Object.values(headers)) {
    registerSecret(value);
    registerSecret(/^[A-Za-z-]+\s+(\S.*)$/.exec(value)?.[1]);
  }
}

/** Waits until process `pid` is gone (checked with signal 0), for at most `ms` milliseconds. */
async function waitGone(pid: number, ms: number): Promise<boolean> {
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + ms;
  while (alive()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

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
    const seconds = checkOptions(options);
    if (!isStdio(options)) registerHeaderSecrets(options.headers ?? {});
    const { Client } = await loadOptional<typeof import("@modelcontextprotocol/sdk/client/index.js")>(
      "@modelcontextprotocol/sdk", FEATURE, "@modelcontextprotocol/sdk/client/index.js",
    );
    const client = new Client({ name: options.clientName ?? "typelm", version: "1" }) as unknown as SdkClient;
    let transport: SdkTransport;
    let stderrTail = "";
    let where: string;
    if (isStdio(options)) {
      const stdio = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const env = options.env === undefined ? undefined : { ...stdio.getDefaultEnvironment(), ...options.env };
      transport = new stdio.StdioClientTransport({
        command: options.command, args: options.args ?? [], env, cwd: options.cwd, stderr: "pipe",
      }) as unknown as SdkTransport;
      transport.stderr?.on("data", (chunk: Buffer) => {
        stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
      where = `the MCP server \`${[options.command, ...(options.args ?? [])].join(" ")}\``;
    } else {
      const http = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      const url = options.url instanceof URL ? options.url : new URL(options.url);
      transport = new http.StreamableHTTPClientTransport(url, { requestInit: { headers: options.headers ?? {} } }) as unknown as SdkTransport;
      where = `the MCP server at ${url.origin}${url.pathname}`;
    }
    try {
      await client.connect(transport);
    } catch (error) {
      await transport.close().catch(() => undefined);
      const message = error instanceof Error ? error.message : String(error);
      const tail = stderrTail.trim() === "" ? "" : `; its stderr ended with: ${stderrTail.trim()}`;
      throw new Error(redactString(`MCPClient could not connect to ${where}: ${message}${tail}`), { cause: error });
    }
    return new MCPClient(client, transport, seconds, transport.pid ?? undefined);
  }

  /** The server's tools (all pages of `tools/list`) as typelm `Tool`s; each call times out after `callTimeout` seconds. */
  async tools(): Promise<MCPTool[]> {
    this.checkOpen();
    const found: MCPToolDescription[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.callTimeoutSeconds * 1000 });
      found.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const caller = { callTool: (name: string, args: Record<string, unknown>, ms: number) => this.callTool(name, args, ms) };
    return found.map((description) => new MCPTool(description, caller, this.callTimeoutSeconds * 1000));
  }

  private async callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<MCPToolResult> {
    if (this.closed) throw new Error("the MCP client is closed");
    try {
      return (await this.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as MCPToolResult;
    } catch (error) {
      if ((error as { code?: unknown }).code === REQUEST_TIMEOUT_CODE) throw new Error(`no answer within ${timeoutMs / 1000} s (callTimeout)`);
      throw error;
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new ConfigurationError("This MCPClient is closed; connect again to use the server");
  }

  /** Ends the session; for stdio, ends the server process and waits until it is gone. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
    if (this.pid !== undefined && !(await waitGone(this.pid, 10_000))) {
      throw new Error(`MCPClient.close: the MCP server process ${this.pid} is still running 10 s after it was told to stop`);
    }
  }
}
