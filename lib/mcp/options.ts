/**
 * The options `MCPClient.connect` takes: a server started as a child process and spoken to over its
 * stdin/stdout (stdio), or a server reached at a URL (Streamable HTTP), plus what both share. Kept in
 * a file of their own so the client's types load without the MCP SDK.
 */

/** What both transports share. */
export interface MCPCommonOptions {
  /** Seconds one tool call may take before it becomes an error observation (default 60). */
  callTimeout?: number;
  /** The name this client gives the server (default "typelm"). */
  clientName?: string;
}

/** A server started as a child process (`node server.js`), spoken to over its stdin and stdout. */
export interface MCPStdioOptions extends MCPCommonOptions {
  command: string;
  args?: string[];
  /**
   * The child's environment. Default: the MCP SDK's safe subset of this process's variables (PATH,
   * HOME and the like, no keys); a given `env` is added to that subset.
   */
  env?: Record<string, string>;
  /** The child's working directory (default: this process's). */
  cwd?: string;
}

/** A server reached over Streamable HTTP at `url`. */
export interface MCPHttpOptions extends MCPCommonOptions {
  url: string | URL;
  /** Headers sent with every request (an `Authorization` token): their values never appear in errors or logs. */
  headers?: Record<string, string>;
}

/** Either transport's options: `command` for stdio, `url` for Streamable HTTP. */
export type MCPConnectOptions = MCPStdioOptions | MCPHttpOptions;
