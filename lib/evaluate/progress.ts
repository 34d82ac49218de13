import { createRequire } from "node:module";

/** What a progress display is told as an evaluation goes. */
export interface ProgressSink {
  update(done: number, values: { score: number; failures: number; cost: number }): void;
  /** A provider batch's status and counts while the run waits on it ("" when none). */
  batch(text: string): void;
  stop(): void;
}

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

const NONE: ProgressSink = { update() {}, batch() {}, stop() {} };

/** An evaluation's bar: examples done / total, running score, failures and cost. */
export function progressBar(progress: boolean | undefined, total: number, label: string): ProgressSink {
  const bar = terminalBar(progress, total, `${label} {bar} {value}/{total} | score {score} | failed {failures} | $ {cost}{batch} | {eta_formatted} left`, {
    score: "-", failures: 0, cost: "0.0000", batch: "",
  });
  if (bar === null) return NONE;
  let done = 0;
  let values: Record<string, string | number> = { score: "-", failures: 0, cost: "0.0000", batch: "" };
  return {
    update(n, { score, failures, cost }) {
      done = n;
      values = { ...values, score: score.toFixed(3), failures, cost: cost.toFixed(4) };
      bar.update(done, values);
    },
    batch(text) {
      values = { ...values, batch: text === "" ? "" : ` | batch ${text}` };
      bar.update(done, values);
    },
    stop: bar.stop,
  };
}
