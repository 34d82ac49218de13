import { ValidationError } from "../../errors.js";

/**
 * A command line typelm cannot read: an unknown command or option, an option without its value, a
 * value of the wrong form, a missing or extra argument. `typelm` prints the sentence and the
 * command's usage, and exits 2 (a command that ran and failed exits 1).
 */
export class UsageError extends ValidationError {}

/** The edit distance of two strings (insertions, deletions, substitutions, swaps of neighbours). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known name closest to a mistyped one, for "did you mean ...?": one edit away (two for a name of
 * six characters or more, none for one character), or a name the given one begins (`--max` for `--max-drop`); the first known
 * name wins a tie. Undefined when none is close.
 */
export function closest(given: string, known: Iterable<string>): string | undefined {
  const typed = given.toLowerCase();
  const allowed = typed.length <= 1 ? 0 : typed.length <= 5 ? 1 : 2;
  let best: { name: string; score: number } | undefined;
  for (const name of known) {
    const edits = distance(typed, name);
    const score = typed.length >= 3 && name.startsWith(typed) ? Math.min(edits, 1) : edits;
    if (score <= allowed && (best === undefined || score < best.score)) best = { name, score };
  }
  return best?.name;
}
