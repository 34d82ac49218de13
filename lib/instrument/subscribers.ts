import type { GlobalConfig } from "../config.js";
import { Instrumentation, type TypelmEvent } from "./bus.js";
import { createLoggerListener } from "./logger.js";

/** Built-in subscribers that are currently attached, by name, with their unsubscribe function. */
const attached = new Map<string, () => void>();

const factories: Record<string, (config: GlobalConfig) => (event: TypelmEvent) => void> = {
  logger: (config) => createLoggerListener(config.logger),
};

/** Attaches exactly the built-in subscribers the configuration asks for. */
export function applySubscribers(config: GlobalConfig): void {
  const wanted = new Set(config.instrumentation.enabled ? config.instrumentation.subscribers : []);
  for (const [name, off] of attached) {
    off();
    attached.delete(name);
  }
  for (const name of wanted) {
    const factory = factories[name];
    if (factory === undefined) continue;
    attached.set(name, Instrumentation.subscribe(/.*/, factory(config)));
  }
}

/** Lets a subscriber module (otel, langfuse, newrelic) register itself under a name. */
export function registerSubscriber(name: string, factory: (config: GlobalConfig) => (event: TypelmEvent) => void): void {
  factories[name] = factory;
}
