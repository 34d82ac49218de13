// Every logger line (debug and up, in one formatter) and every event from here on, for the tests that
// look for what must never be written (keys, credentials).
import { configure, Instrumentation, type TypelmEvent } from "../../lib/index.js";

type Config = Parameters<Parameters<typeof configure>[0]>[0];

/** Turns the logger on at debug level into `lines` and subscribes `events`; `also` adds settings; `off` stops the event capture. */
export function captureLogs(formatter: "json" | "text", also?: (c: Config) => void): { lines: string[]; events: TypelmEvent[]; off: () => void } {
  const lines: string[] = [];
  const events: TypelmEvent[] = [];
  configure((c) => {
    c.instrumentation.enabled = true;
    c.instrumentation.subscribers = ["logger"];
    c.logger.level = "debug";
    c.logger.formatter = formatter;
    c.logger.output = (line) => lines.push(line);
    also?.(c);
  });
  return { lines, events, off: Instrumentation.subscribe(/.*/, (e) => events.push(e)) };
}
