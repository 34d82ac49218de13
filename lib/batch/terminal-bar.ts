// The terminal progress bar (cli-progress on standard error) that evaluations, optimizers and
// `program.batch` draw when standard error is a terminal; notebooks follow events instead.
import { createRequire } from "node:module";

/** One cli-progress bar on standard error, shared by Evaluation and the optimizers. */
export interface TerminalBar {
  update(done: number, values: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

/**
 * A terminal progress bar (cli-progress, on standard error) when standard error is a terminal and
 * `progress` is not false; otherwise `null` and nothing is drawn (notebooks and logs follow the
 * `evaluation.*` and `optimizer.*` events instead). `format` is cli-progress's, with `values`' keys.
 */
export function terminalBar(progress: boolean | undefined, total: number, format: string, values: Record<string, string | number>): TerminalBar | null {
  if (progress === false || process.stderr.isTTY !== true) return null;
  // Loaded only here: most runs (tests, CI, notebooks) never draw a bar.
  const cliProgress = createRequire(import.meta.url)("cli-progress") as typeof import("cli-progress");
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, values);
  return {
    update: (done, v) => bar.update(done, v),
    setTotal: (n) => bar.setTotal(n),
    stop: () => bar.stop(),
  };
}

