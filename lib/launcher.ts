// npx, `npm exec` and `npm run` start a command through a shell (`sh -c`), and npm passes SIGINT and
// SIGTERM on to that shell only: killing npx ends npm and the shell and leaves the command running
// (a viewer kept listening). A long-running command started that way watches the processes that
// started it and stops as on SIGTERM when one of them has ended.
import { readFileSync } from "node:fs";

/**
 * The processes that started this one through npm, to watch: the parent (the shell npm ran) and, where
 * /proc tells it, the parent's parent (npm itself); none when npm did not start it (`npm_command`
 * unset), since a shell or a terminal then signals the command itself.
 */
export function npmLaunchers(env: NodeJS.ProcessEnv = process.env): number[] {
  if (env["npm_command"] === undefined && env["npm_lifecycle_event"] === undefined) return [];
  const pids = [process.ppid];
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (Number.isSafeInteger(ppid) && ppid > 1) pids.push(ppid);
  } catch {
    // No /proc (macOS): the shell alone is watched; npm ends it when it is signalled.
  }
  return pids.filter((pid) => pid > 1);
}

/** Whether process `pid` still exists (signal 0 checks without sending anything; EPERM means it exists). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/**
 * Calls `gone` once when one of `pids` has ended (checked every `everyMs`, 500 by default); returns a
 * function that stops watching. The timer does not keep the process alive.
 */
export function whenEnded(pids: readonly number[], gone: () => void, everyMs = 500): () => void {
  if (pids.length === 0) return () => undefined;
  const timer = setInterval(() => {
    if (pids.every(alive)) return;
    clearInterval(timer);
    gone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
