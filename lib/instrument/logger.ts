import type { LoggerConfig, LogLevel } from "../config.js";
import type { TypelmEvent } from "./bus.js";
import { redact } from "./redact.js";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Level of an event: failures are errors, per-chunk detail is debug, the rest info. */
function levelOf(event: TypelmEvent): LogLevel {
  if (event.payload["ok"] === false || event.payload["error"] !== undefined) return "error";
  if (event.name === "lm.request.start" || event.name === "lm.chat.start" || event.name === "tool.call") return "debug";
  return "info";
}

function formatText(level: LogLevel, event: TypelmEvent): string {
  const parts = Object.entries(event.payload)
    .filter(([, v]) => v !== undefined && (typeof v !== "object" || v === null))
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : String(v)}`);
  return `${new Date(event.timestamp).toISOString()} ${level.toUpperCase()} ${event.name}${parts.length ? " " + parts.join(" ") : ""}`;
}

export function createLoggerListener(config: LoggerConfig): (event: TypelmEvent) => void {
  return (event) => {
    const level = levelOf(event);
    if (rank[level] < rank[config.level]) return;
    const safe: TypelmEvent = { ...event, payload: redact(event.payload) as Record<string, unknown> };
    const line = config.formatter === "json"
      ? JSON.stringify({ level, event: safe.name, timestamp: new Date(safe.timestamp).toISOString(), ...safe.payload })
      : formatText(level, safe);
    if (config.output) config.output(line);
    else process.stderr.write(line + "\n");
  };
}
