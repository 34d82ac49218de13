import { ConfigurationError } from "../errors.js";
import { Instrumentation, type TypelmEvent } from "./bus.js";
import { createLoggerListener, type LoggerConfig } from "./logger.js";
import { langfuseSubscriber, newRelicSubscriber, otelSubscriber } from "./vendors.js";

/** `c.instrumentation`: whether the built-in subscribers run, and which. */
export interface InstrumentationConfig {
  enabled: boolean;
  /** Built-in subscribers to switch on: "logger", "otel", "langfuse", "newrelic". */
  subscribers: string[];
}

/** The part of the global configuration the built-in subscribers read, handed to them by `configure`. */
export interface SubscriberSettings {
  instrumentation: InstrumentationConfig;
  logger: LoggerConfig;
}

type Factory = (config: SubscriberSettings) => (event: TypelmEvent) => void;

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
export function applySubscribers(config: SubscriberSettings): void {
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
