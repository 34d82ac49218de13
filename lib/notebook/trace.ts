import { ValidationError } from "../errors.js";
import { show, type MimeBundle } from "./bundle.js";
import { escapeHtml, htmlText, showValue } from "./html.js";
import { expectObject } from "./input.js";
import { predictionFields } from "./prediction.js";

/** One agent step, whatever the agent: a ReAct tool call, a CodeAct or ProgramOfThought code run. */
interface TimelineStep {
  step: number;
  thought: string | null;
  /** "action" (a tool name and its input) or "code" (JavaScript and its output). */
  kind: "action" | "code";
  action: string | null;
  input: string;
  result: string;
  error: string | null;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | null {
  return value === null || value === undefined ? null : showValue(value);
}

/** Reads ReActStep, CodeActStep and ProgramAttempt shapes; unknown fields are ignored. */
function toStep(raw: unknown, position: number): TimelineStep {
  const s = record(raw);
  const step = typeof s.step === "number" ? s.step : typeof s.attempt === "number" ? s.attempt : position + 1;
  const thought = text(s.thought);
  if (typeof s.code === "string") {
    return { step, thought, kind: "code", action: null, input: s.code, result: text(s.output) ?? "", error: text(s.error) };
  }
  // A ReAct observation that failed is the message the model was shown, starting with "Error:".
  const observation = text(s.observation) ?? "";
  const error = /^error\b/i.test(observation) ? observation : null;
  return { step, thought, kind: "action", action: text(s.action), input: text(s.toolInput) ?? "{}", result: error ? "" : observation, error };
}

/** The steps of an agent result (`history`), a ProgramOfThought result (`attempts`) or a `MaxIterationsError`. */
export function traceSteps(agentResult: object): TimelineStep[] {
  expectObject(agentResult, "display.trace", "an agent result (a ReAct, CodeAct or ProgramOfThought result, or a MaxIterationsError)");
  const r = agentResult as { history?: unknown; attempts?: unknown };
  const steps = Array.isArray(r.history) ? r.history : Array.isArray(r.attempts) ? r.attempts : null;
  if (!steps) {
    throw new ValidationError(
      "display.trace expects an agent result: a ReAct or CodeAct result (with `history`), a ProgramOfThought result " +
        "(with `attempts`) or a MaxIterationsError; received an object with neither. Use display.prediction for other predictions.",
      { field: "agentResult" },
    );
  }
  return steps.map(toStep);
}

const BOX = "border-left:3px solid #4c78a8;margin:6px 0;padding:4px 10px;font:13px sans-serif";
const ERROR_BOX = "border-left:3px solid #d62728;background:#fdecea;margin:6px 0;padding:4px 10px;font:13px sans-serif";
const PRE = "margin:2px 0;padding:4px 6px;background:#f6f8fa;white-space:pre-wrap;font:12px monospace";

function stepHtml(s: TimelineStep): string {
  const parts = [`<div style="font-weight:bold">Step ${escapeHtml(s.step)}${s.error ? " · error" : ""}</div>`];
  if (s.thought) parts.push(`<div><i>Thought:</i> ${htmlText(s.thought)}</div>`);
  if (s.kind === "code") {
    parts.push(`<div><i>Code:</i></div><pre style="${PRE}">${htmlText(s.input)}</pre>`);
    if (s.result) parts.push(`<div><i>Output:</i></div><pre style="${PRE}">${htmlText(s.result)}</pre>`);
  } else {
    parts.push(`<div><i>Action:</i> <code>${htmlText(s.action ?? "")}</code> <i>input:</i> <code>${htmlText(s.input)}</code></div>`);
    if (s.result) parts.push(`<div><i>Observation:</i></div><pre style="${PRE}">${htmlText(s.result)}</pre>`);
  }
  if (s.error) parts.push(`<div style="color:#b00020"><b>Error:</b> ${htmlText(s.error.replace(/^error:\s*/i, ""))}</div>`);
  return `<div style="${s.error ? ERROR_BOX : BOX}">${parts.join("")}</div>`;
}

function stepText(s: TimelineStep): string {
  const lines = [`Step ${s.step}${s.error ? " [ERROR]" : ""}`];
  if (s.thought) lines.push(`  thought: ${s.thought}`);
  if (s.kind === "code") {
    lines.push("  code:", ...s.input.split("\n").map((l) => `    ${l}`));
    if (s.result) lines.push(`  output: ${s.result}`);
  } else {
    lines.push(`  action: ${s.action ?? ""} ${s.input}`);
    if (s.result) lines.push(`  observation: ${s.result}`);
  }
  if (s.error) lines.push(`  error: ${s.error}`);
  return lines.join("\n");
}

/**
 * The timeline bundle: each step's thought, action or code, input, observation or output; errors in
 * red. Long texts are cut in the HTML (`htmlText`) and whole in `text/plain`.
 */
export function traceBundle(agentResult: object): MimeBundle {
  const steps = traceSteps(agentResult);
  const failed = steps.filter((s) => s.error).length;
  const heading = `${steps.length} step${steps.length === 1 ? "" : "s"}${failed ? `, ${failed} with errors` : ""}`;
  const answer = agentResult instanceof Error ? [] : predictionFields(agentResult).filter(([k]) => k !== "attempts");
  const answerHtml = answer.length
    ? `<div style="${BOX};border-color:#2ca02c"><b>Answer:</b> ${answer.map(([k, v]) => `<div><i>${escapeHtml(k)}:</i> ${htmlText(showValue(v))}</div>`).join("")}</div>`
    : agentResult instanceof Error
      ? `<div style="${ERROR_BOX}"><b>${escapeHtml(agentResult.name)}:</b> ${htmlText(agentResult.message)}</div>`
      : "";
  const html = `<div class="typelm-trace"><div style="font:bold 13px sans-serif">Agent trace: ${escapeHtml(heading)}</div>${steps.map(stepHtml).join("")}${answerHtml}</div>`;
  const answerText = answer.length ? ["Answer:", ...answer.map(([k, v]) => `  ${k}: ${showValue(v)}`)] : [];
  return { "text/html": html, "text/plain": [`Agent trace: ${heading}`, ...steps.map(stepText), ...answerText].join("\n") };
}

/** Shows an agent's steps as a timeline in a notebook; returns the bundle outside one. */
export function displayTrace(agentResult: object): MimeBundle | undefined {
  return show(traceBundle(agentResult));
}
