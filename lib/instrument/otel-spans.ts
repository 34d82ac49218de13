/**
 * Turns typelm's events into OpenTelemetry spans, named and attributed by the GenAI semantic
 * conventions. Each `<kind>.start` opens a span under the span whose typelm id is the event's
 * `parentSpanId`; the matching end closes it. Other events become span events on their span.
 * Runs synchronously inside `emit`: only in-memory work, exporting happens in the background.
 */
import type * as OTelApi from "@opentelemetry/api";
import type { TypelmEvent } from "./bus.js";

type Payload = Record<string, unknown>;
type Attributes = OTelApi.Attributes;

export interface SpanListenerOptions {
  /** Put prompt and completion text on chat spans (`gen_ai.input.messages` / `gen_ai.output.messages`). */
  content: boolean;
  /** Add Langfuse's own observation attributes (type, input, output). */
  langfuse: boolean;
  /**
   * Gives the next span typelm's ids (typelm's own export pipelines). Without it (the application's
   * provider picks ids) each span carries `typelm.trace_id` and `typelm.span_id` to match log lines.
   */
  adoptIds?: (traceId: string, spanId: string) => void;
}

interface SpanKindSpec {
  /** Event names that open and close this kind of span. */
  start: string;
  end: string;
  name(p: Payload): string;
  client?: boolean;
  /** Langfuse observation type shown in its UI. */
  observation: string;
  startAttributes?(p: Payload): Attributes;
  endAttributes?(p: Payload): Attributes;
}

const SPANS: SpanKindSpec[] = [
  { start: "module.forward.start", end: "module.forward.end", observation: "chain", name: (p) => `module ${str(p.module)}` },
  { start: "prediction.start", end: "prediction.end", observation: "span", name: (p) => `predict ${str(p.signature)}` },
  {
    start: "lm.chat.start", end: "lm.chat.end", observation: "generation", client: true,
    name: (p) => `chat ${str(p.model)}`,
    startAttributes: (p) => ({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": str(p.provider),
      "gen_ai.system": str(p.provider),
      "gen_ai.request.model": str(p.model),
      "gen_ai.request.temperature": num(p.temperature),
      "gen_ai.request.max_tokens": num(p.maxTokens),
    }),
    endAttributes: (p) => ({
      "gen_ai.usage.input_tokens": num(p.inputTokens),
      "gen_ai.usage.output_tokens": num(p.outputTokens),
      "gen_ai.response.finish_reasons": typeof p.finishReason === "string" ? [p.finishReason] : undefined,
      "gen_ai.response.model": typeof p.responseModel === "string" ? p.responseModel : undefined,
      // Streamed calls: time to the first text chunk, in seconds (as Sentry's GenAI conventions name it).
      "gen_ai.response.time_to_first_token": num(p.firstTokenMs) === undefined ? undefined : (p.firstTokenMs as number) / 1000,
    }),
  },
  { start: "lm.request.start", end: "lm.request.end", observation: "span", client: true, name: (p) => `request ${str(p.model)}`,
    endAttributes: (p) => ({ "http.response.status_code": num(p.status) }) },
  {
    start: "tool.call.start", end: "tool.call", observation: "tool", name: (p) => `execute_tool ${str(p.tool)}`,
    startAttributes: (p) => ({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": str(p.tool) }),
  },
  { start: "sandbox.run.start", end: "sandbox.run.end", observation: "span", name: () => "sandbox.run" },
  { start: "evaluation.start", end: "evaluation.end", observation: "evaluator", name: (p) => label("evaluation", p) },
  { start: "optimizer.start", end: "optimizer.end", observation: "span", name: (p) => label("optimizer", p) },
];

const BY_START = new Map(SPANS.map((s) => [s.start, s]));
const BY_END = new Map(SPANS.map((s) => [s.end, s]));
/** Fields that are not copied as `typelm.*` attributes: ids, text, and what is mapped elsewhere. */
const SKIPPED = new Set(["traceId", "spanId", "parentSpanId", "messages", "content", "args", "error"]);
/** Spans whose end never came (a caller that died) are evicted past this many, oldest first. */
const MAX_OPEN = 10_000;

function str(v: unknown): string {
  return typeof v === "string" ? v : String(v ?? "");
}
function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}
function label(kind: string, p: Payload): string {
  const name = p.name ?? p.optimizer ?? p.program;
  return typeof name === "string" && name !== "" ? `${kind} ${name}` : kind;
}

/** Primitive payload fields as `typelm.<field>` attributes (what no convention names). */
function typelmAttributes(p: Payload): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(p)) {
    if (SKIPPED.has(k)) continue;
    if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out[`typelm.${k}`] = v;
  }
  return out;
}

function defined(attrs: Attributes | undefined): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs ?? {})) if (v !== undefined && v !== "") out[k] = v;
  return out;
}

/** Chat messages in the GenAI conventions' shape: `[{ role, parts: [{ type: "text", content }] }]`. */
function genAiMessages(messages: unknown): string {
  const list = Array.isArray(messages) ? messages as { role?: unknown; content?: unknown }[] : [];
  return JSON.stringify(list.map((m) => ({ role: m.role, parts: [{ type: "text", content: m.content }] })));
}

function contentAttributes(spec: SpanKindSpec, p: Payload, phase: "start" | "end", options: SpanListenerOptions): Attributes {
  const out: Attributes = {};
  if (spec.start === "lm.chat.start") {
    if (phase === "start" && options.content) out["gen_ai.input.messages"] = genAiMessages(p.messages);
    if (phase === "end" && options.content) {
      out["gen_ai.output.messages"] = JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: p.content }], finish_reason: p.finishReason }]);
    }
    if (options.langfuse && phase === "start") out["langfuse.observation.input"] = JSON.stringify(p.messages ?? []);
    if (options.langfuse && phase === "end" && typeof p.content === "string") out["langfuse.observation.output"] = p.content;
    // Langfuse computes time to first token from when the completion started (the first chunk).
    if (options.langfuse && phase === "end" && num(p.firstTokenMs) !== undefined && num(p.durationMs) !== undefined) {
      out["langfuse.observation.completion_start_time"] = new Date(Date.now() - (p.durationMs as number) + (p.firstTokenMs as number)).toISOString();
    }
  }
  if (spec.start === "tool.call.start" && phase === "start" && options.langfuse) out["langfuse.observation.input"] = JSON.stringify(p.args ?? null);
  if (options.langfuse && phase === "start") out["langfuse.observation.type"] = spec.observation;
  return out;
}

/** Builds the event listener that maps typelm spans onto `tracer`. */
export function createSpanListener(api: typeof OTelApi, tracer: OTelApi.Tracer, options: SpanListenerOptions): (event: TypelmEvent) => void {
  const open = new Map<string, OTelApi.Span>();

  const start = (spec: SpanKindSpec, p: Payload): void => {
    const id = p.spanId as string;
    const parent = typeof p.parentSpanId === "string" ? open.get(p.parentSpanId) : undefined;
    // At typelm's root, nest under whatever span the application has active (if it set a context manager).
    const ctx = parent ? api.trace.setSpan(api.context.active(), parent) : api.context.active();
    const attributes = defined({
      ...typelmAttributes(p), ...spec.startAttributes?.(p), ...contentAttributes(spec, p, "start", options),
    });
    const kind = spec.client ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
    if (options.adoptIds) options.adoptIds(str(p.traceId), id);
    else Object.assign(attributes, { "typelm.trace_id": str(p.traceId), "typelm.span_id": id });
    open.set(id, tracer.startSpan(spec.name(p), { kind, attributes }, ctx));
    if (open.size > MAX_OPEN) {
      const [oldest, span] = open.entries().next().value as [string, OTelApi.Span];
      span.setAttribute("typelm.unfinished", true);
      span.end();
      open.delete(oldest);
    }
  };

  const end = (spec: SpanKindSpec, p: Payload): void => {
    const id = p.spanId as string;
    const span = open.get(id);
    if (span === undefined) return;
    open.delete(id);
    span.setAttributes(defined({ ...typelmAttributes(p), ...spec.endAttributes?.(p), ...contentAttributes(spec, p, "end", options) }));
    if (p.ok === false) {
      const message = typeof p.error === "string" ? p.error : "failed";
      const name = /^(\w+):/.exec(message)?.[1] ?? (typeof p.failure === "string" ? p.failure : "Error");
      span.setAttribute("error.type", name);
      span.recordException({ name, message });
      span.setStatus({ code: api.SpanStatusCode.ERROR, message });
    }
    span.end();
  };

  return (event) => {
    const p = event.payload;
    const opening = BY_START.get(event.name);
    if (opening) return start(opening, p);
    const closing = BY_END.get(event.name);
    if (closing) return end(closing, p);
    // Anything else (iterations, trials, token counts) is a moment inside its span.
    const span = typeof p.spanId === "string" ? open.get(p.spanId) : undefined;
    span?.addEvent(event.name, defined(typelmAttributes(p)));
  };
}
