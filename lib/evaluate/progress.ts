import { terminalBar } from "../batch/terminal-bar.js";

export { terminalBar, type TerminalBar } from "../batch/terminal-bar.js";

/** What a progress display is told as an evaluation goes. */
export interface ProgressSink {
  update(done: number, values: { score: number; failures: number; cost: number }): void;
  /** A provider batch's status and counts while the run waits on it ("" when none). */
  batch(text: string): void;
  stop(): void;
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
