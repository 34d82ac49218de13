/** Severity of a log line. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** The `logger` subscriber's settings (`c.logger`). */
export interface LoggerConfig {
  level: LogLevel;
  formatter: "json" | "text";
  /** Where log lines go; standard error by default. */
  output: ((line: string) => void) | undefined;
}

import type { TypelmEvent } from "./bus.js";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Prompt and completion text stay out of log lines (they go to tracing backends); ids get a fixed place. */
const OMITTED = new Set(["messages", "content", "traceId", "spanId", "parentSpanId"]);

const DEBUG_EVENTS = new Set(["lm.request.start", "lm.chat.start", "tool.call.start", "tool.call", "sandbox.run.start", "lm.structured.fallback"]);

/** Level of an event: failures are errors, `*.warning` events warnings, per-chunk detail is debug, the rest info. */
function levelOf(event: TypelmEvent): LogLevel {
  if (event.payload["ok"] === false || (event.payload["error"] !== undefined && event.payload["error"] !== null)) return "error";
  if (event.name.endsWith(".warning")) return "warn";
  if (DEBUG_EVENTS.has(event.name)) return "debug";
  return "info";
}

function fields(event: TypelmEvent): [string, unknown][] {
  return Object.entries(event.payload).filter(([k, v]) => v !== undefined && !OMITTED.has(k));
}

function formatText(level: LogLevel, event: TypelmEvent): string {
  const parts = fields(event)
    .filter(([, v]) => typeof v !== "object" || v === null)
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : String(v)}`);
  const ids = `trace=${String(event.payload["traceId"])} span=${String(event.payload["spanId"])}`;
  return `${new Date(event.timestamp).toISOString()} ${level.toUpperCase()} ${event.name} ${ids}${parts.length ? " " + parts.join(" ") : ""}`;
}

function formatJson(level: LogLevel, event: TypelmEvent): string {
  const { traceId, spanId, parentSpanId } = event.payload;
  return JSON.stringify({
    level, event: event.name, timestamp: new Date(event.timestamp).toISOString(), traceId, spanId, parentSpanId,
    ...Object.fromEntries(fields(event)),
  });
}

/** The `logger` subscriber. Payloads arrive already redacted (the bus does it at emission). */
export function createLoggerListener(config: LoggerConfig): (event: TypelmEvent) => void {
  return (event) => {
    const level = levelOf(event);
    if (rank[level] < rank[config.level]) return;
    const line = config.formatter === "json" ? formatJson(level, event) : formatText(level, event);
    if (config.output) config.output(line);
    else process.stderr.write(line + "\n");
  };
}
