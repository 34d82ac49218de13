import { Instrumentation, type TypelmEvent } from "../instrument/bus.js";
import { liveDisplay, type LiveDisplay, type MimeBundle } from "./bundle.js";
import { escapeHtml, formatNumber } from "./html.js";

/** What one running evaluation, optimization or `program.batch` has reported so far. */
export interface ProgressState {
  kind: "evaluation" | "optimizer" | "batch";
  name: string;
  /** Examples (evaluation) or trials (optimizer) finished. */
  done: number;
  /** Examples to evaluate; for an optimizer, the search trials its budget allows (its config's `trials`). */
  total: number | null;
  /** Optimizer only: minibatch (search) trials done, the ones `total` counts. */
  searched: number;
  /** Mean score so far (evaluation), best score so far (optimizer). */
  score: number | null;
  failures: number;
  cost: number;
  finished: boolean;
  /** Why the run failed, when it did. */
  error: string | null;
  /** While a provider batch runs (Evaluation with `batch`): its status and counts, e.g. "in_progress 120 / 400, 2 failed". */
  batch?: string | null;
}

type Payload = Record<string, unknown>;

const num = (p: Payload, ...keys: string[]): number | undefined => {
  for (const k of keys) if (typeof p[k] === "number" && Number.isFinite(p[k])) return p[k] as number;
  return undefined;
};

/** The first metric's score (the headline metric), when the event carries per-metric scores only. */
function firstScore(p: Payload): number | undefined {
  const scores = (p.scores ?? p.metrics) as Record<string, unknown> | undefined;
  if (!scores || typeof scores !== "object") return undefined;
  return Object.values(scores).find((v): v is number => typeof v === "number");
}

/**
 * Folds one event into the state. Evaluation's `evaluation.example` carries running totals (`done`,
 * `score` = mean so far, `failures`, `cost` = spent so far); an event without `done` is read as one
 * example's own score and cost, so a differently shaped emitter still gives sensible numbers.
 * Optimizer trials carry no cost: it is summed from `lm.tokens.used` while the run is active.
 */
export function applyEvent(state: ProgressState, name: string, p: Payload, scoreSum: { sum: number }): void {
  if (name.endsWith(".batch") || name === "batch.provider") {
    const counts = (p.counts ?? {}) as Payload;
    const status = typeof p.status === "string" ? p.status : "?";
    state.batch = `round ${num(p, "round") ?? 0}: ${status} ${num(counts, "completed") ?? 0} / ${num(counts, "total") ?? 0}, ${num(counts, "failed") ?? 0} failed`;
    return;
  }
  if (name.endsWith(".start")) {
    const config = (p.config ?? {}) as Payload;
    state.total = num(p, "total") ?? num(config, "trials", "numTrials") ?? state.total;
    const label = p.name ?? p.optimizer;
    if (typeof label === "string") state.name = label;
    return;
  }
  if (name.endsWith(".end")) {
    state.finished = true;
    if (p.ok === false || p.status === "failed") state.error = typeof p.error === "string" ? p.error : "failed";
    state.done = state.kind === "optimizer" ? num(p, "trials") ?? state.done : num(p, "done", "total") ?? state.done;
    state.score = state.kind === "optimizer" ? num(p, "score") ?? state.score : firstScore(p) ?? num(p, "score") ?? state.score;
    state.cost = num(p, "cost") ?? state.cost;
    state.failures = num(p, "failures") ?? state.failures;
    return;
  }
  const cumulative = num(p, "done") !== undefined;
  state.done = num(p, "done") ?? state.done + 1;
  state.total = num(p, "total") ?? state.total;
  state.failures = num(p, "failures") ?? state.failures + (p.error ? 1 : 0);
  if (state.kind === "optimizer") {
    if (/minibatch/i.test(String(p.kind ?? ""))) state.searched++;
    const score = num(p, "score");
    // As in the candidates chart: minibatch (and GEPA's rejected) and bootstrap scores never set the best score.
    if (score !== undefined && !/minibatch|rejected|bootstrap/i.test(String(p.kind ?? ""))) state.score = Math.max(state.score ?? score, score);
    return;
  }
  state.cost = cumulative ? num(p, "cost") ?? state.cost : state.cost + (num(p, "cost") ?? 0);
  if (cumulative && num(p, "score") !== undefined) {
    state.score = num(p, "score")!;
  } else {
    scoreSum.sum += num(p, "score") ?? firstScore(p) ?? 0;
    state.score = scoreSum.sum / Math.max(1, state.done);
  }
}

/** The progress display: a bar, counts, running score, failures and cost. */
export function progressBundle(s: ProgressState): MimeBundle {
  const unit = s.kind === "evaluation" ? "examples" : s.kind === "batch" ? "inputs" : "trials";
  const progressed = s.kind === "optimizer" ? s.searched : s.done;
  const share = s.finished ? 1 : s.total ? Math.min(1, progressed / s.total) : 0;
  // A best score chose its configuration on the examples it was measured on: it is optimistic.
  const label = s.kind === "evaluation" ? "running score" : "best (validation, chosen on it)";
  const status = s.error ? `failed: ${s.error}` : s.finished ? "done" : "running";
  const counts = s.kind === "optimizer"
    ? `${s.done} ${unit}${s.total ? ` (${s.searched} / ${s.total} search trials)` : ""}`
    : `${s.done}${s.total ? ` / ${s.total}` : ""} ${unit}`;
  // A batch of calls has no score.
  const scored = s.kind === "batch" ? "" : ` · ${label} ${formatNumber(s.score)}`;
  const line = `${s.name} (${status}): ${counts}${scored} · failures ${s.failures} · cost $${s.cost.toFixed(4)}` +
    (s.batch && !s.finished ? ` · batch ${s.batch}` : "");
  const bar =
    `<div style="width:320px;height:10px;background:#eee;border-radius:3px;overflow:hidden">` +
    `<div style="width:${(share * 100).toFixed(1)}%;height:100%;background:${s.failures ? "#e4a11b" : "#4c78a8"}"></div></div>`;
  return {
    "text/html": `<div class="typelm-progress" style="font:13px sans-serif">${bar}<div>${escapeHtml(line)}</div></div>`,
    "text/plain": line,
  };
}

const WATCHING = Symbol.for("typelm.notebook.progress");
const THROTTLE_MS = 250;

/**
 * Shows every evaluation, optimizer run and `program.batch` in the notebook as one display updated in
 * place, driven by the `evaluation.*`, `optimizer.*` and `batch.*` events. Outside a notebook it shows nothing (the terminal has
 * the Evaluation's progress bar). Returns a function that stops watching. Called once when
 * `typelm/notebook` is imported inside tslab; calling it again does not add a second display.
 */
export function watchProgress(): () => void {
  const holder = globalThis as { [WATCHING]?: () => void };
  if (holder[WATCHING]) return holder[WATCHING];
  const runs = new Map<string, { state: ProgressState; display: LiveDisplay; sum: { sum: number }; shownAt: number }>();
  const onEvent = (event: TypelmEvent) => {
    const p = (event.payload ?? {}) as Payload;
    const kind = event.name.startsWith("evaluation.") ? "evaluation" : event.name.startsWith("batch.") ? "batch" : "optimizer";
    // `program.batch` records no run: its events carry their own id.
    const id = kind === "batch" ? p.id : p.runId;
    const key = `${kind}:${typeof id === "string" ? id : ""}`;
    let run = runs.get(key);
    if (event.name.endsWith(".start")) {
      if (p.progress === false) return;
      // Optimizers score candidates through Evaluation: those inner runs belong to the optimizer's display.
      if (kind === "evaluation" && [...runs.values()].some((r) => r.state.kind === "optimizer")) return;
      const display = liveDisplay();
      if (!display) return;
      const name = typeof p.name === "string" ? p.name : kind === "evaluation" ? "Evaluation" : kind === "batch" ? "batch" : "Optimizer";
      run = { state: { kind, name, done: 0, total: null, searched: 0, score: null, failures: 0, cost: 0, finished: false, error: null }, display, sum: { sum: 0 }, shownAt: 0 };
      runs.set(key, run);
    }
    if (!run) return;
    applyEvent(run.state, event.name, p, run.sum);
    const now = Date.now();
    if (run.state.finished || event.name.endsWith(".start") || now - run.shownAt >= THROTTLE_MS) {
      run.display.update(progressBundle(run.state));
      run.shownAt = now;
    }
    if (run.state.finished) runs.delete(key);
  };
  const onTokens = (event: TypelmEvent) => {
    const cost = num((event.payload ?? {}) as Payload, "estimatedCost") ?? 0;
    for (const run of runs.values()) if (run.state.kind === "optimizer") run.state.cost += cost;
  };
  const offs = [
    Instrumentation.subscribe(/^evaluation\.(start|example|batch|end)$/, onEvent),
    Instrumentation.subscribe(/^optimizer\.(start|trial|end)$/, onEvent),
    Instrumentation.subscribe(/^batch\.(start|input|provider|end)$/, onEvent),
    Instrumentation.subscribe("lm.tokens.used", onTokens),
  ];
  const stop = () => {
    offs.forEach((off) => off());
    delete holder[WATCHING];
  };
  holder[WATCHING] = stop;
  return stop;
}
