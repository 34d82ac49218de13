import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { nodeCrypto } from "../../load-sync.js";
import { ConfigurationError } from "../../errors.js";

/** The lock a run holds on its report folder while it runs and writes there. */
export const REPORT_LOCK = ".typelm-report.lock";

/** A report folder held by this process: files written into it atomically, and the lock released at the end. */
export interface ReportFolder {
  dir: string;
  /** Writes `name` atomically: a temporary file in the folder, renamed over the name (a link there is replaced, never followed). */
  write(name: string, data: string | Uint8Array): void;
  /** Lets go of the folder; when the run made it (and its parents) and wrote nothing, they are removed again. */
  release(): void;
}

interface LockHolder {
  pid: number;
  host: string;
}

/**
 * Takes the report folder `dir` for this run (making it when needed). While one run holds it,
 * another run for the same folder is refused at once, with the holder's process id, rather than
 * running for minutes and then mixing its files with the first one's. A lock left by a process that
 * no longer exists (a run killed with `kill -9`) is taken over.
 */
export function takeReportFolder(dir: string): ReportFolder {
  // The first folder made (dir itself or a parent such as reports/), or undefined when dir existed.
  const made = mkdirSync(dir, { recursive: true });
  const lock = join(dir, REPORT_LOCK);
  const mine: LockHolder = { pid: process.pid, host: hostname() };
  acquire(lock, mine, dir);
  let wrote = false;
  let released = false;
  return {
    dir,
    write(name, data) {
      if (released) throw new Error(`the report folder ${dir} was already released`);
      writeAtomic(dir, name, data);
      wrote = true;
    },
    release() {
      if (released) return;
      released = true;
      if (sameHolder(readHolder(lock), mine)) unlinkQuietly(lock);
      if (made !== undefined && !wrote) {
        // The folders this run made, innermost first, as long as they are empty.
        for (let folder = dir; ; folder = dirname(folder)) {
          try {
            if (readdirSync(folder).length > 0) break;
            rmdirSync(folder);
          } catch {
            break; // someone else put something there meanwhile: leave it
          }
          if (folder === made || dirname(folder) === folder) break;
        }
      }
    },
  };
}

/**
 * Writes `data` to `dir/name` so that a reader sees the old file or the new one, never a mix, and a
 * symbolic link at that name is replaced by the file rather than written through (rename replaces
 * the link itself). The temporary file is made with O_EXCL, so it cannot be a link planted in advance.
 */
export function writeAtomic(dir: string, name: string, data: string | Uint8Array): void {
  const target = join(dir, name);
  const temporary = join(dir, `.${name}.${process.pid}.${nodeCrypto().randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temporary, data, { flag: "wx" });
    renameSync(temporary, target);
  } catch (error) {
    unlinkQuietly(temporary);
    throw new ConfigurationError(`Cannot write ${target}: ${(error as { message?: string }).message ?? String(error)}`, { cause: error });
  }
}

function acquire(lock: string, mine: LockHolder, dir: string): void {
  const content = JSON.stringify(mine) + "\n";
  for (let attempt = 0; attempt < 20; attempt++) {
    if (create(lock, content)) return;
    const holder = readHolder(lock);
    if (holder === "missing") continue; // released meanwhile: try again
    if (holder === "unreadable") {
      // Being written this instant (only on a file system without hard links), or not a lock typelm wrote.
      pause(50);
      continue;
    }
    if (holder.host !== mine.host || alive(holder.pid)) {
      throw new ConfigurationError(
        `Another typelm run (process ${holder.pid}${holder.host !== mine.host ? ` on ${holder.host}` : ""}) is writing its report to ${dir}: ` +
          `wait for it to finish, or write this one elsewhere with --out DIR. If no such run is going on, remove ${lock}`,
      );
    }
    takeOver(lock, holder);
  }
  throw new ConfigurationError(
    `Cannot take the report folder ${dir}: ${lock} is in the way and is not a lock typelm can read; remove it if no other typelm run is writing there`,
  );
}

/** Waits synchronously (the lock is taken before anything else of the run starts). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Creates the lock with its whole content at once (a hard link to a finished file); false when it exists. */
function create(lock: string, content: string): boolean {
  const temporary = `${lock}.${process.pid}.${nodeCrypto().randomBytes(6).toString("hex")}`;
  writeFileSync(temporary, content, { flag: "wx" });
  try {
    linkSync(temporary, lock);
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
    // A file system without hard links: exclusive creation (its content is written a moment later).
    try {
      writeFileSync(lock, content, { flag: "wx" });
      return true;
    } catch (inner) {
      if ((inner as { code?: string }).code === "EEXIST") return false;
      throw inner;
    }
  } finally {
    unlinkQuietly(temporary);
  }
}

/**
 * Removes a dead process's lock. It is first moved aside (only one run can move a given file); if
 * what was moved is not the dead holder's lock after all (another run replaced it meanwhile), it is
 * put back.
 */
function takeOver(lock: string, dead: LockHolder): void {
  const aside = `${lock}.stale.${process.pid}.${nodeCrypto().randomBytes(6).toString("hex")}`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // someone else moved it first
  }
  if (!sameHolder(readHolder(aside), dead)) {
    try {
      linkSync(aside, lock);
    } catch {
      // A third run took the folder meanwhile; the next attempt sees its lock.
    }
  }
  unlinkQuietly(aside);
}

function readHolder(lock: string): LockHolder | "missing" | "unreadable" {
  try {
    if (!lstatSync(lock).isFile()) return "unreadable"; // a link or a folder: never followed
    const parsed = JSON.parse(readFileSync(lock, "utf8")) as Partial<LockHolder> | null;
    if (typeof parsed?.pid === "number" && Number.isInteger(parsed.pid) && typeof parsed.host === "string") return { pid: parsed.pid, host: parsed.host };
    return "unreadable";
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return "missing";
    if (error instanceof SyntaxError) return "unreadable";
    throw error;
  }
}

function sameHolder(a: LockHolder | "missing" | "unreadable", b: LockHolder): boolean {
  return typeof a === "object" && a.pid === b.pid && a.host === b.host;
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"; // it exists, owned by someone else
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
