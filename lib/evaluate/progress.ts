import { createRequire } from "node:module";

/** What a progress display is told as an evaluation goes. */
export interface ProgressSink {
  update(done: number, values: { score: number; failures: number; cost: number }): void;
  stop(): void;
}

const NONE: ProgressSink = { update() {}, stop() {} };

/**
 * A terminal progress bar (cli-progress, on standard error) when standard error is a terminal and
 * `progress` is not false; otherwise nothing is drawn (notebooks and logs follow the
 * `evaluation.example` events instead).
 */
export function progressBar(progress: boolean | undefined, total: number, label: string): ProgressSink {
  if (progress === false || process.stderr.isTTY !== true) return NONE;
  // Loaded only here: most runs (tests, CI, notebooks) never draw a bar.
  const cliProgress = createRequire(import.meta.url)("cli-progress") as typeof import("cli-progress");
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} {bar} {value}/{total} | score {score} | failed {failures} | $ {cost} | {eta_formatted} left`,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { score: "-", failures: 0, cost: "0.0000" });
  return {
    update(done, { score, failures, cost }) {
      bar.update(done, { score: score.toFixed(3), failures, cost: cost.toFixed(4) });
    },
    stop() {
      bar.stop();
    },
  };
}
