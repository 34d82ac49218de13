/**
 * Real MCP server processes for the MCP tests: the "everything" reference server from its npm package
 * and the fixture server (test/fixtures/mcp/server.mjs), over stdio or Streamable HTTP. HTTP servers
 * listen on a port the system picks; the helper waits for the `listening <port>` line, never a sleep.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The everything server's entry point (its package's `bin`). */
export const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const FIXTURE = join(ROOT, "test", "fixtures", "mcp", "server.mjs");
const REPORT_PORT = join(ROOT, "test", "fixtures", "mcp", "report-port.mjs");

/** A server process listening over HTTP. */
export interface HttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function startHttp(args: string[], env: NodeJS.ProcessEnv, path: string): Promise<HttpServer> {
  const child = spawn(process.execPath, args, { env: { ...process.env, NODE_OPTIONS: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
  };
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString("utf8");
      const match = /listening (\d+)/.exec(seen);
      if (match !== null) resolve({ url: `http://127.0.0.1:${match[1]}${path}`, child, stop });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening: ${seen}`)));
  });
}

/** The everything server over Streamable HTTP (its endpoint is /mcp). */
export function startEverythingHttp(): Promise<HttpServer> {
  return startHttp(["--import", REPORT_PORT, EVERYTHING, "streamableHttp"], { PORT: "0" }, "/mcp");
}

/** The fixture server over Streamable HTTP, requiring `Authorization: Bearer <token>`. */
export function startFixtureHttp(token: string): Promise<HttpServer> {
  return startHttp([FIXTURE, "http"], { MCP_FIXTURE_TOKEN: token }, "/mcp");
}

/** Whether process `pid` exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
