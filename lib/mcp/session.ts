/**
 * An MCP session's work, loaded by `MCPClient.connect` at its first use (not at `import "typelm"`):
 * checking the connect options, opening the session (loads the optional `@modelcontextprotocol/sdk`, starts the transport, a stdio child
 * process or a Streamable HTTP connection, and completes the handshake, or throws an Error naming the
 * server, header values masked, the tail of a stdio server's stderr quoted), listing the server's
 * tools page by page, calling one with a timeout, and closing it (for stdio, until the process is gone).
 */
import { ConfigurationError } from "../errors.js";
import { redactString, registerSecret } from "../instrument/redact.js";
import { loadOptional } from "../optional.js";
import type { MCPConnectOptions, MCPHttpOptions, MCPStdioOptions } from "./options.js";
import type { MCPToolResult } from "./result.js";
import { MCPTool, type MCPToolDescription } from "./tool.js";

/** How much of a stdio server's stderr a failed connection quotes. */
const STDERR_TAIL = 2000;
const FEATURE = "MCPClient";
const DEFAULT_CALL_TIMEOUT_SECONDS = 60;
/** JSON-RPC code the SDK gives a request that ran past its timeout. */
const REQUEST_TIMEOUT_CODE = -32001;

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

/**
 * `MCPClient.connect`: checks `options` (a ConfigurationError for neither or both of `command` and
 * `url`, or a bad `callTimeout`), registers HTTP header values as secrets, then opens the session.
 */
export async function connectSession(
  options: MCPConnectOptions,
): Promise<{ client: SdkClient; transport: SdkTransport; callTimeoutSeconds: number }> {
  const callTimeoutSeconds = checkOptions(options);
  if (!isStdio(options)) registerHeaderSecrets(options.headers ?? {});
  return { ...(await openSession(options)), callTimeoutSeconds };
}

/** Connects to the server `options` names (already checked by `connectSession`). */
async function openSession(options: MCPConnectOptions): Promise<{ client: SdkClient; transport: SdkTransport }> {
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

/** Every page of the server's `tools/list`, each request bounded by `timeoutMs`. */
export async function listAllTools(client: SdkClient, timeoutMs: number): Promise<MCPToolDescription[]> {
  const found: MCPToolDescription[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    found.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return found;
}

/** Calls tool `name` on the server; a request past `timeoutMs` rejects naming the `callTimeout`. */
export async function callServerTool(client: SdkClient, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<MCPToolResult> {
  try {
    return (await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as MCPToolResult;
  } catch (error) {
    if ((error as { code?: unknown }).code === REQUEST_TIMEOUT_CODE) throw new Error(`no answer within ${timeoutMs / 1000} s (callTimeout)`);
    throw error;
  }
}

/** Ends the session and the transport; for stdio (`pid`), waits until the server process is gone. */
export async function closeSession(client: SdkClient, transport: SdkTransport, pid: number | undefined): Promise<void> {
  await client.close().catch(() => undefined);
  await transport.close().catch(() => undefined);
  if (pid !== undefined && !(await waitGone(pid, 10_000))) {
    throw new Error(`MCPClient.close: the MCP server process ${pid} is still running 10 s after it was told to stop`);
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

/** `MCPClient.tools()`: the server's tools as typelm `Tool`s, each calling back through `callTool` with a timeout of `timeoutMs`. */
export async function serverTools(
  client: SdkClient,
  timeoutMs: number,
  callTool: (name: string, args: Record<string, unknown>, timeoutMs: number) => Promise<MCPToolResult>,
): Promise<MCPTool[]> {
  const found = await listAllTools(client, timeoutMs);
  const caller = { callTool };
  return found.map((description) => new MCPTool(description, caller, timeoutMs));
}
