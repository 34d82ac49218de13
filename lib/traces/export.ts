/**
 * `typelm traces export`: a module's traces as a dataset folder that `loadDataset` and experiment
 * files read: `data.jsonl` (one line per trace: `id`, the inputs, the outputs; split 60/20/20 when
 * loaded) and `signature.json` (the fields' types read from the values, kept when the folder has one).
 * With `reviewed`, only traces a person reviewed (the `annotations` table the review queue writes:
 * the latest annotation of each row counts): corrected outputs first, then those marked "pass" as
 * they are; a trace marked otherwise without a correction is left out. Without it, every trace that did not fail,
 * except those whose latest user feedback scored 0 or less.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ValidationError } from "../errors.js";
import type { Lab } from "../store/lab-store.js";
import { feedbackFor } from "./feedback.js";
import { labQuery } from "./sql.js";
import { tracedModules, tracesIn, type StoredTrace } from "./window.js";

/** What an export wrote. */
export interface ExportResult {
  file: string;
  rows: number;
  corrected: number;
  /** Whether signature.json was written (false: the folder's own was kept). */
  signature: boolean;
}

interface Annotation {
  run_id: string; example_id: string; verdict: string; expected_json: string | null;
}

/** Writes `module`'s traces from [from, to) into the folder `out`. */
export async function exportTraces(lab: Lab, options: { module: string; reviewed: boolean; out: string; from: number; to: number }): Promise<ExportResult> {
  const traces = await tracesIn(lab, options.module, options.from, options.to);
  if (traces.length === 0) {
    const known = await tracedModules(lab);
    throw new ValidationError(
      `no traces of module ${JSON.stringify(options.module)} in ${lab.path}${known.length === 0 ? " (no module has traces yet: set c.traces = { sample })" : `; modules with traces: ${known.join(", ")}`}`,
      { field: "module" },
    );
  }
  const lines: { id: string; values: Record<string, unknown>; corrected: boolean }[] = [];
  if (options.reviewed) {
    const latest = await latestAnnotations(lab, traces);
    for (const t of traces) {
      const a = latest.get(`${t.runId}\u0000${t.traceId}`);
      if (a === undefined) continue;
      if (a.expected_json !== null) lines.push({ id: t.traceId, values: { ...t.inputs, ...(JSON.parse(a.expected_json) as Record<string, unknown>) }, corrected: true });
      else if (a.verdict === "pass" && t.prediction !== null) lines.push({ id: t.traceId, values: { ...t.inputs, ...t.prediction }, corrected: false });
    }
    lines.sort((a, b) => Number(b.corrected) - Number(a.corrected));
  } else {
    const feedback = await feedbackFor(lab, traces.map((t) => t.traceId));
    for (const t of traces) {
      const given = feedback.get(t.traceId);
      if (t.error !== null || t.prediction === null || (given !== undefined && given[given.length - 1]!.score <= 0)) continue;
      lines.push({ id: t.traceId, values: { ...t.inputs, ...t.prediction }, corrected: false });
    }
  }
  mkdirSync(options.out, { recursive: true });
  const file = join(options.out, "data.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify({ id: l.id, ...l.values })).join("\n") + (lines.length > 0 ? "\n" : ""));
  const signaturePath = join(options.out, "signature.json");
  const writeSignature = !existsSync(signaturePath) && lines.length > 0;
  if (writeSignature) writeFileSync(signaturePath, `${JSON.stringify(signatureOf(options.module, traces[0]!), null, 2)}\n`);
  return { file, rows: lines.length, corrected: lines.filter((l) => l.corrected).length, signature: writeSignature };
}

/** The latest annotation of each traced row, when the lab has an annotations table (none: an empty map). */
async function latestAnnotations(lab: Lab, traces: readonly StoredTrace[]): Promise<Map<string, Annotation>> {
  const out = new Map<string, Annotation>();
  const runIds = [...new Set(traces.map((t) => t.runId))];
  let rows: (Annotation & { id: number })[];
  try {
    rows = await labQuery<Annotation & { id: number }>(lab,
      `SELECT id, run_id, example_id, verdict, expected_json FROM annotations WHERE run_id IN (${runIds.map(() => "?").join(", ")}) ORDER BY id`, runIds);
  } catch (error) {
    if (/no such table|does not exist/.test(String((error as Error).message))) return out;
    throw error;
  }
  for (const r of rows) out.set(`${r.run_id}\u0000${r.example_id}`, r);
  return out;
}

/** signature.json for the trace's fields, each field's type read from its value. */
function signatureOf(module: string, trace: StoredTrace): Record<string, unknown> {
  const fields = (values: Record<string, unknown>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { type: typeOf(v) }]));
  return { name: module, description: `Traces of ${module} recorded in production.`, input: fields(trace.inputs), output: fields(trace.prediction ?? {}) };
}

function typeOf(value: unknown): string {
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return "string[]";
  return "string";
}
