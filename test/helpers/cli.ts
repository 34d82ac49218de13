import { execFile } from "node:child_process";
import { join } from "node:path";

/** The built command line (npm run build writes it); experiment files need it: they import "typelm" from dist/. */
export const BIN = join(process.cwd(), "dist/pkg/bin.js");

/** Nothing may answer as Ollama or as TYPELM_LM, so the stand-in is what runs unless --lm is given. */
export const offline: NodeJS.ProcessEnv = { ...process.env, TYPELM_LM: "", OLLAMA_HOST: "http://127.0.0.1:9" };

/** Runs `typelm <args>` in a child process from `cwd`; resolves with its exit code and output (never rejects). */
export function runBuiltCli(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = offline): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `typelm <args>` in this process (lib/, not dist/) from `cwd`; resolves with its exit code and output. */
export async function runCliHere(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = offline): Promise<{ code: number; stdout: string; stderr: string }> {
  const { runCli } = await import("../../lib/lab/cli/index.js");
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; }, cwd, env, ollamaProbeMs: 200 });
  return { code, stdout, stderr };
}

/** A `typelm view` process started from the built command, with its address once it has printed it. */
export interface ViewProcess {
  url: string;
  /** What it has written so far. */
  output(): { stdout: string; stderr: string };
  /** Sends SIGTERM and resolves with how it exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `typelm view <args>` and waits for the `typelm view: <url>` line (rejects if it exits first). */
export async function startViewCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<ViewProcess> {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, [BIN, "view", ...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const m = /typelm view: (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`typelm view exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    output: () => ({ stdout, stderr }),
    stop() {
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
      child.kill("SIGTERM");
      return exited;
    },
  };
}
