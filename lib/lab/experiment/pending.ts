/**
 * What a command is waiting for, innermost last. When the process runs out of work with the command
 * unfinished (a promise nothing can settle any more: an experiment file's top-level await that never
 * ends), the command line names the wait instead of exiting silently.
 */
const waits: string[] = [];

/** Runs `work`, noting meanwhile that the command waits for `what` (a phrase: "the model x to answer"). */
export async function waitingFor<T>(what: string, work: () => Promise<T>): Promise<T> {
  waits.push(what);
  try {
    return await work();
  } finally {
    const at = waits.lastIndexOf(what);
    if (at >= 0) waits.splice(at, 1);
  }
}

/** The waits in progress, innermost last. */
export function pendingWaits(): readonly string[] {
  return [...waits];
}
