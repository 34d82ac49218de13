import type { GlobalConfig } from "../config.js";
import { ConfigurationError } from "../errors.js";
import { Instrumentation, type TypelmEvent } from "./bus.js";
import { createLoggerListener } from "./logger.js";
import { langfuseSubscriber, newRelicSubscriber, otelSubscriber } from "./vendors.js";

type Factory = (config: GlobalConfig) => (event: TypelmEvent) => void;

/** Built-in subscribers that are currently attached, by name, with their unsubscribe function. */
const attached = new Map<string, () => void>();
/** The names `c.instrumentation.subscribers` can list. */
const factories = new Map<string, Factory>([
  ["logger", (config) => createLoggerListener(config.logger)],
  ["otel", otelSubscriber],
  ["langfuse", langfuseSubscriber],
  ["newrelic", newRelicSubscriber],
]);

/**
 * Attaches exactly the built-in subscribers the configuration asks for. Every listener is built
 * first, so a missing credential or unknown name throws (ConfigurationError) with the previous
 * subscribers still attached.
 */
export function applySubscribers(config: GlobalConfig): void {
  const wanted = new Set(config.instrumentation.enabled ? config.instrumentation.subscribers : []);
  const built: [string, (event: TypelmEvent) => void][] = [];
  for (const name of wanted) {
    const factory = factories.get(name);
    if (factory === undefined) {
      throw new ConfigurationError(
        `c.instrumentation.subscribers: unknown subscriber "${name}". Expected one of ${[...factories.keys()].map((n) => `"${n}"`).join(", ")}.`,
      );
    }
    built.push([name, factory(config)]);
  }
  for (const off of attached.values()) off();
  attached.clear();
  for (const [name, listener] of built) attached.set(name, Instrumentation.subscribe(/.*/, listener));
}
