// The command line's production-trace commands: `typelm traces export|prune`, `typelm rescore
// traces:<module>` (a metric or judge over a window of traces, an evaluation run with intervals) and
// `typelm compare` between two windows with the gate's verdict (paired by canonical input hash when
// the same inputs recur in both windows, unpaired otherwise). The traces themselves: lib/traces/.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { canonicalJson } from "../../canonical-json.js";
import { ValidationError } from "../../errors.js";
import { Evaluation } from "../../evaluate/evaluation.js";
import { formatPValue, signed } from "../../evaluate/compare.js";
import type { EvaluationReport } from "../../evaluate/report.js";
import type { MetricSpec } from "../../evaluate/scoring.js";
import { Module } from "../../module.js";
import { FewShotExample } from "../../prompt/few-shot.js";
import { LabStore, type Lab } from "../../store/lab-store.js";
import { openPostgresLabStore } from "../../store/pg-lab-store.js";
import type { EvaluationRow } from "../../store/records.js";
import { exportTraces } from "../../traces/export.js";
import { pruneTraces } from "../../traces/prune.js";
import { unpairedDecision } from "../../traces/unpaired.js";
import { parseDuration, tracedModules, tracesIn, type StoredTrace } from "../../traces/window.js";
import { loadMetricFile } from "../experiment/load-metric.js";
import { gradedDecision } from "../gate/verdict.js";
import { checkTolerance, DEFAULT_TOLERANCE } from "../gate/rows.js";
import { chooseStore } from "../runs/team-store.js";
import { printable } from "../terminal.js";
import { showRun } from "./show.js";
import { UsageError } from "./usage.js";

/** The options the trace commands read. */
export interface TracesValues {
  module?: string | undefined; out?: string | undefined; reviewed?: boolean | undefined; since?: string | undefined;
  "older-than"?: string | undefined; store?: string | undefined; metric?: string[] | undefined;
  tolerance?: string | undefined; "allow-underpowered"?: boolean | undefined;
}

/** A window of one module's traces: `traces:<module>@<from>..<to>` (durations back from now) or `traces:<module>` with `--since`. */
export interface TraceWindow {
  module: string;
  from: number;
  to: number;
  label: string;
}

/** Whether a run argument names traces (`traces:<module>...`) rather than a run id. */
export function isTraceSpec(text: string): boolean {
  return text.startsWith("traces:");
}

/** Reads `traces:<module>[@<from>..<to>]`; without the window, the last `since` (default 7d). */
export function traceWindow(spec: string, since: string | undefined, now = Date.now()): TraceWindow {
  const match = /^traces:([^@]+)(?:@(.+?)\.\.(.+))?$/.exec(spec);
  if (match === null) throw new UsageError(`expected traces:<module> or traces:<module>@<from>..<to> such as traces:Pipeline@14d..7d; received ${spec}`, { field: "run" });
  const module = match[1]!;
  const from = now - parseDuration(match[2] ?? since ?? "7d", match[2] === undefined ? "--since" : "the window's start");
  const to = now - (match[3] === undefined ? 0 : parseDuration(match[3], "the window's end"));
  if (!(from < to)) throw new UsageError(`the window ${spec} is empty: its start must be further back than its end (e.g. @14d..7d)`, { field: "run" });
  return { module, from, to, label: `traces:${module}@${new Date(from).toISOString()}..${new Date(to).toISOString()}` };
}

/** Opens the store a trace command reads (--store, else TYPELM_LAB_URL, else the folder's file) and runs `fn` on it. */
export async function withTraceStore<T>(values: TracesValues, env: NodeJS.ProcessEnv, cwd: string, fn: (store: Lab) => Promise<T>): Promise<T> {
  const chosen = chooseStore(values.store, env, cwd);
  if (chosen.engine === "postgresql") {
    const team = openPostgresLabStore(chosen.url);
    try {
      return await fn(team);
    } finally {
      await team.close();
    }
  }
  if (!existsSync(chosen.path)) throw new ValidationError(`no lab store at ${chosen.path}; traces are recorded there by c.traces = { sample }`, { field: "store" });
  return fn(LabStore.open(chosen.path));
}

/** `typelm traces export|prune ...`: what it prints. */
export async function tracesCommand(rest: readonly string[], values: TracesValues, env: NodeJS.ProcessEnv, cwd: string): Promise<string> {
  const [sub, ...extra] = rest;
  if (extra.length > 0) throw new UsageError(`traces ${sub ?? ""} takes options only; received ${extra.join(" ")}`, { field: "traces" });
  if (sub === "export") {
    if (values.module === undefined) throw new UsageError("traces export needs --module <name> (the module class whose traces to export)", { field: "module" });
    if (values.out === undefined) throw new UsageError("traces export needs --out <folder> (where data.jsonl and signature.json go)", { field: "out" });
    const to = Date.now();
    const from = values.since === undefined ? 0 : to - parseDuration(values.since, "--since");
    const out = resolve(cwd, values.out);
    const r = await withTraceStore(values, env, cwd, (store) => exportTraces(store, { module: values.module!, reviewed: values.reviewed === true, out, from, to }));
    return `${printable(r.file)}: ${r.rows} examples${values.reviewed === true ? ` (${r.corrected} corrected, ${r.rows - r.corrected} accepted as they were)` : ""}` +
      `${r.signature ? "; signature.json written from the values' types" : ""}\n`;
  }
  if (sub === "prune") {
    if (values["older-than"] === undefined) throw new UsageError("traces prune needs --older-than <duration>, e.g. --older-than 30d", { field: "older-than" });
    const cutoff = Date.now() - parseDuration(values["older-than"], "--older-than");
    const r = await withTraceStore(values, env, cwd, (store) => pruneTraces(store, cutoff));
    return `deleted ${r.traces} traces started before ${new Date(cutoff).toISOString()} (${r.runs} whole days)\n`;
  }
  throw new UsageError(`traces takes export or prune; received ${sub ?? "nothing"}`, { field: "traces" });
}

/** Answers each trace's inputs with its recorded outputs (or its recorded error); calls no model. */
class StoredTraces extends Module {
  constructor(private readonly traces: Map<object, StoredTrace>) {
    super();
  }

  async forward(inputs: Record<string, unknown>): Promise<Record<string, unknown>> {
    const trace = this.traces.get(inputs)!;
    if (trace.error !== null || trace.prediction === null) throw new Error(trace.error ?? "the trace has no outputs");
    return trace.prediction;
  }
}

/** Scores a window's traces with `metrics`: an evaluation run (recorded in `store`) with intervals. */
export async function scoreWindow(store: Lab, window: TraceWindow, metrics: readonly MetricSpec[]): Promise<{ report: EvaluationReport; traces: StoredTrace[] }> {
  const traces = await tracesIn(store, window.module, window.from, window.to);
  if (traces.length === 0) {
    const known = await tracedModules(store);
    throw new ValidationError(`no traces of ${window.module} in ${window.label.slice(`traces:${window.module}@`.length)}${known.length === 0 ? "" : ` (modules with traces: ${known.join(", ")})`}`, { field: "run" });
  }
  // Traces have no reference: each example's expected output is the recorded one (a failed trace's: its fields as null),
  // so score them with reference-free metrics and judges.
  const fields = Object.keys(traces.find((t) => t.prediction !== null)?.prediction ?? { output: null });
  const examples = traces.map((t) => new FewShotExample({ input: t.inputs, output: t.prediction ?? Object.fromEntries(fields.map((f) => [f, null])), id: t.traceId }));
  const byInput = new Map<object, StoredTrace>(examples.map((e, i) => [e.input, traces[i]!]));
  const report = await new Evaluation({ name: window.label, lab: store, progress: false })
    .evaluate({ moduleInstance: new StoredTraces(byInput), testExamples: examples, metrics: [...metrics] });
  return { report: report as EvaluationReport, traces };
}

async function metricsOf(files: readonly string[] | undefined, cwd: string, command: string): Promise<MetricSpec[]> {
  if (files === undefined || files.length === 0) throw new UsageError(`${command} of traces needs --metric <file> (a metric function or a Judge to score them with)`, { field: "metric" });
  const out: MetricSpec[] = [];
  for (const file of files) out.push(await loadMetricFile(file, cwd));
  return out;
}

/** `typelm rescore traces:<module> --since 7d --metric judge.mjs`: the new run as `typelm show` shows it. */
export async function rescoreTraces(store: Lab, spec: string, values: TracesValues, cwd: string): Promise<string> {
  const window = traceWindow(spec, values.since);
  const metrics = await metricsOf(values.metric, cwd, "rescore");
  const { report } = await scoreWindow(store, window, metrics);
  const run = await store.run(report.runId!);
  return showRun(run!);
}

/**
 * `typelm compare traces:M@14d..7d traces:M@7d..0d --metric judge.mjs`: scores both windows, then the
 * gate's verdict on the first metric's difference (second − first). Returns the text and whether the gate passed.
 */
export async function compareWindows(store: Lab, specs: readonly [string, string], values: TracesValues, cwd: string): Promise<{ text: string; ok: boolean }> {
  const [a, b] = specs.map((s) => traceWindow(s, values.since)) as [TraceWindow, TraceWindow];
  const tolerance = checkTolerance(values.tolerance === undefined ? DEFAULT_TOLERANCE : Number(values.tolerance));
  const metrics = await metricsOf(values.metric, cwd, "compare");
  const base = await scoreWindow(store, a, metrics);
  const cand = await scoreWindow(store, b, metrics);
  const metric = Object.keys(base.report.metrics)[0]!;
  const decision = windowDecision(base.report.results, cand.report.results, metric, tolerance);
  const verdict = decision.verdict;
  const lines = [
    `baseline  ${a.label}: ${base.traces.length} traces, ${metric} ${base.report.metrics[metric]!.toFixed(3)} (run ${base.report.runId})`,
    `candidate ${b.label}: ${cand.traces.length} traces, ${metric} ${cand.report.metrics[metric]!.toFixed(3)} (run ${cand.report.runId})`,
    decision.paired
      ? `paired: ${decision.pairs} inputs recur in both windows (matched by canonical input hash, each input's mean score); ${decision.test}`
      : `unpaired: only ${decision.pairs} inputs recur in both windows; ${decision.test}`,
    `difference ${signed(decision.diff)}, one-sided 95% lower bound ${signed(decision.low)}, ${formatPValue(decision.pValue)} (one-sided, "no drop")`,
    `gate: ${verdict} (tolerance ${tolerance}: failed = significantly worse; passed = a drop larger than the tolerance ruled out; inconclusive = neither)`,
  ];
  const ok = verdict === "passed" || (verdict === "inconclusive" && values["allow-underpowered"] === true);
  return { text: `${lines.map(printable).join("\n")}\n`, ok };
}

/** The verdict between two windows' scored rows: paired by input hash when at least half of each window's distinct inputs recur in the other. */
export function windowDecision(baseRows: readonly EvaluationRow[], candRows: readonly EvaluationRow[], metric: string, tolerance: number) {
  const group = (rows: readonly EvaluationRow[]) => {
    const out = new Map<string, number[]>();
    for (const r of rows) {
      const key = canonicalJson(r.inputs);
      const list = out.get(key) ?? [];
      list.push(r.scores[metric] ?? 0);
      out.set(key, list);
    }
    return out;
  };
  const ga = group(baseRows), gb = group(candRows);
  const shared = [...ga.keys()].filter((k) => gb.has(k));
  const paired = shared.length >= 2 && shared.length * 2 >= ga.size && shared.length * 2 >= gb.size;
  if (paired) {
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    const rows = (g: Map<string, number[]>) => shared.map((k, index) => ({
      index, exampleId: k, inputs: {}, expected: {}, prediction: {}, scores: { [metric]: mean(g.get(k)!) }, error: null, durationMs: 0, inputTokens: 0, outputTokens: 0, cost: 0,
    }));
    const report = (r: EvaluationRow[]) => ({ results: r, metrics: { [metric]: r.reduce((s, x) => s + x.scores[metric]!, 0) / r.length } });
    const d = gradedDecision(report(rows(ga)), report(rows(gb)), metric, tolerance);
    return { paired: true, pairs: shared.length, verdict: d.verdict, diff: d.diff, low: d.low, pValue: d.pValue, test: `${d.test}, lower bound ${d.lowMethod}` };
  }
  const u = unpairedDecision(baseRows.map((r) => r.scores[metric] ?? 0), candRows.map((r) => r.scores[metric] ?? 0), tolerance);
  return { paired: false, pairs: shared.length, ...u, test: "permutation test of the difference of means (10,000 seeded shuffles), percentile-bootstrap lower bound" };
}
