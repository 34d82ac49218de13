/**
 * Opening an MCP session, loaded by `MCPClient.connect` at its first use (not at `import "typelm"`):
 * loads the optional `@modelcontextprotocol/sdk`, starts the transport (a stdio child process or a
 * Streamable HTTP connection) and completes the handshake, or throws an Error naming the server
 * (header values masked, the tail of a stdio server's stderr quoted).
 */
import { redactString } from "../instrument/redact.js";
import { loadOptional } from "../optional.js";
import type { MCPConnectOptions, MCPStdioOptions } from "./options.js";
import type { MCPToolDescription } from "./tool.js";

/** How much of a stdio server's stderr a failed connection quotes. */
const STDERR_TAIL = 2000;
const FEATURE = "MCPClient";

/** The parts of the SDK's Client `MCPClient` uses. */
export interface SdkClient {
  connect(transport: unknown): Promise<void>;
  listTools(params?: { cursor?: string }, options?: { timeout?: number }): Promise<{ tools: MCPToolDescription[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }, schema?: unknown, options?: { timeout?: number }): Promise<unknown>;
  close(): Promise<void>;
}

/** The parts of the SDK's transports `MCPClient` uses. */
export interface SdkTransport {
  close(): Promise<void>;
  readonly pid?: number | null;
  readonly stderr?: NodeJS.ReadableStream | null;
}

function isStdio(options: MCPConnectOptions): options is MCPStdioOptions {
  return typeof (options as MCPStdioOptions).command === "string";
}

/** Connects to the server `options` names (already checked by `MCPClient.connect`). */
export async function openSession(options: MCPConnectOptions): Promise<{ client: SdkClient; transport: SdkTransport }> {
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
  return { client, transport };
}
