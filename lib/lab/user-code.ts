import { isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { packageRoot } from "./datasets.js";

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
