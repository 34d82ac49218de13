import { isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { TypelmError } from "../../errors.js";
import { packageRoot } from "../dataset/load.js";

/**
 * The first frame of an error's stack that is the user's own code, as `file:line:column`: not
 * typelm's (its lib/ and dist/), not Node's, not a package's in node_modules. Undefined when there is
 * none (or no stack).
 */
export function userFrame(error: unknown): string | undefined {
  const stack = (error as { stack?: unknown } | null | undefined)?.stack;
  if (typeof stack !== "string") return undefined;
  let own: string[];
  try {
    own = [join(packageRoot(), "lib"), join(packageRoot(), "dist")];
  } catch {
    own = [];
  }
  for (const line of stack.split("\n")) {
    const m = /^\s+at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/.exec(line);
    if (m === null) continue;
    let file = m[1]!;
    if (file.startsWith("file://")) {
      try {
        file = fileURLToPath(file.replace(/[?#].*$/, ""));
      } catch {
        continue;
      }
    }
    if (!isAbsolute(file) || file.includes(`${sep}node_modules${sep}`)) continue;
    if (own.some((dir) => { const rel = relative(dir, file); return !rel.startsWith("..") && !isAbsolute(rel); })) continue;
    return `${file}:${m[2]}:${m[3]}`;
  }
  return undefined;
}

const THROWN_BY = Symbol.for("typelm.thrownBy");

/**
 * Runs the user's own code (`what`: "the experiment's program function"), marking what it throws as
 * theirs, so the command line says so instead of calling it an error of typelm's. The error itself
 * is rethrown as it is (a thrown non-object becomes an Error with its text); typelm's own errors,
 * which already say what to fix, are not marked.
 */
export function inUserCode<T>(what: string, run: () => T): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    throw marked(error, what);
  }
  if (result instanceof Promise) return result.catch((error: unknown) => { throw marked(error, what); }) as T;
  return result;
}

/** What `inUserCode` named as the code that threw `error`, or undefined. */
export function thrownBy(error: unknown): string | undefined {
  const by = error !== null && (typeof error === "object" || typeof error === "function") ? (error as Record<symbol, unknown>)[THROWN_BY] : undefined;
  return typeof by === "string" ? by : undefined;
}

/**
 * An error the user's code threw, in one line: which code, the error's name and message, and the
 * line of the user's own file that threw when the stack shows it. Undefined for any other error.
 */
export function userCodeFailure(error: unknown): string | undefined {
  const by = thrownBy(error);
  if (by === undefined) return undefined;
  const e = error as { name?: unknown; message?: unknown };
  const name = typeof e.name === "string" && e.name !== "" ? e.name : "Error";
  const message = typeof e.message === "string" ? e.message.split("\n")[0] : String(error);
  const where = userFrame(error);
  return `${by} threw ${name}: ${message}${where === undefined ? "" : ` (at ${where})`}; the error is in the experiment's own code, not in typelm`;
}

function marked(error: unknown, what: string): unknown {
  if (error instanceof TypelmError) return error;
  const target = error !== null && typeof error === "object" && Object.isExtensible(error) ? error : new Error(String(error), { cause: error });
  if (thrownBy(target) === undefined) Object.defineProperty(target, THROWN_BY, { value: what, configurable: true });
  return target;
}
