/**
 * The tracing subscribers: `otel` (the application's tracer provider, or OTLP export of its own),
 * `langfuse` and `newrelic` (OTLP to the vendor with its authentication, and only that: the
 * collector's `OTEL_EXPORTER_OTLP_*` headers stay with `otel`, see otel-export.ts). Credentials are
 * checked, and registered as secrets, when the subscriber is switched on.
 */
import { ConfigurationError } from "../errors.js";
import type { TypelmEvent } from "./bus.js";
import { exportPipeline, otelApi } from "./otel-export.js";
import { createSpanListener } from "./otel-spans.js";
import { registerSecret } from "./redact.js";

type Listener = (event: TypelmEvent) => void;

const LANGFUSE_DEFAULT_HOST = "https://cloud.langfuse.com";
const NEW_RELIC_US_ENDPOINT = "https://otlp.nr-data.net:4318";
const NEW_RELIC_EU_ENDPOINT = "https://otlp.eu01.nr-data.net:4318";

function env(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function required(subscriber: string, name: string, expected: string): string {
  const value = env(name);
  if (value === undefined) {
    throw new ConfigurationError(
      `Subscriber "${subscriber}": environment variable ${name} is not set. Expected ${expected}; received nothing. ` +
        `Set ${name} before configure(), or remove "${subscriber}" from c.instrumentation.subscribers.`,
    );
  }
  registerSecret(value);
  return value;
}

function serviceName(): string {
  return env("OTEL_SERVICE_NAME") ?? "typelm";
}

/** Prompt and completion text on spans only when asked (the OpenTelemetry GenAI opt-in variable). */
function captureContent(): boolean {
  return env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")?.toLowerCase() === "true";
}

/** `base` + `/v1/traces`, unless `base` already is the traces URL. */
function tracesUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1/traces") ? trimmed : `${trimmed}/v1/traces`;
}

/** `OTEL_EXPORTER_OTLP_HEADERS` ("k=v,k2=v2") may hold keys: they must never be written anywhere. */
function registerOtlpHeaderSecrets(): void {
  for (const variable of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    for (const pair of (env(variable) ?? "").split(",")) {
      const value = pair.slice(pair.indexOf("=") + 1).trim();
      if (!pair.includes("=")) continue;
      registerSecret(value);
      try {
        registerSecret(decodeURIComponent(value));
      } catch {
        // Not percent-encoded: the raw value is registered already.
      }
    }
  }
}

/** True when the application registered a global tracer provider. */
function appHasTracerProvider(api: ReturnType<typeof otelApi>): boolean {
  const provider = api.trace.getTracerProvider() as Partial<InstanceType<typeof api.ProxyTracerProvider>>;
  return typeof provider.getDelegateTracer === "function" ? provider.getDelegateTracer("typelm") !== undefined : true;
}

export function otelSubscriber(): Listener {
  const api = otelApi();
  const content = captureContent();
  const endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? env("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (!appHasTracerProvider(api) && endpoint !== undefined) {
    registerOtlpHeaderSecrets();
    // No url: the exporter reads the OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers).
    const pipeline = exportPipeline({ serviceName: serviceName(), feature: "The otel subscriber (OTLP export to OTEL_EXPORTER_OTLP_ENDPOINT)" });
    return createSpanListener(api, pipeline.tracer, { content, langfuse: false, adoptIds: pipeline.adoptIds });
  }
  // The global tracer follows whatever provider the application registers, now or later.
  return createSpanListener(api, api.trace.getTracer("typelm"), { content, langfuse: false });
}

export function langfuseSubscriber(): Listener {
  const publicKey = required("langfuse", "LANGFUSE_PUBLIC_KEY", 'a Langfuse project public key ("pk-lf-…")');
  const secretKey = required("langfuse", "LANGFUSE_SECRET_KEY", 'a Langfuse project secret key ("sk-lf-…")');
  const host = env("LANGFUSE_HOST") ?? env("LANGFUSE_BASEURL") ?? LANGFUSE_DEFAULT_HOST;
  const basic = Buffer.from(`${publicKey}:${secretKey}`).toString("base64");
  registerSecret(basic);
  const pipeline = exportPipeline({
    url: `${host.replace(/\/+$/, "")}/api/public/otel/v1/traces`,
    headers: { Authorization: `Basic ${basic}` },
    serviceName: serviceName(),
    feature: "The langfuse subscriber",
  });
  return createSpanListener(otelApi(), pipeline.tracer, { content: true, langfuse: true, adoptIds: pipeline.adoptIds });
}

/** `NEW_RELIC_OTLP_ENDPOINT`, else the EU endpoint when `NEW_RELIC_REGION=eu`, else the US one; as a traces URL. */
export function newRelicTracesUrl(): string {
  const region = env("NEW_RELIC_REGION")?.toLowerCase();
  return tracesUrl(env("NEW_RELIC_OTLP_ENDPOINT") ?? (region === "eu" ? NEW_RELIC_EU_ENDPOINT : NEW_RELIC_US_ENDPOINT));
}

export function newRelicSubscriber(): Listener {
  const licenseKey = required("newrelic", "NEW_RELIC_LICENSE_KEY", "a New Relic ingest license key");
  const pipeline = exportPipeline({ url: newRelicTracesUrl(), headers: { "api-key": licenseKey }, serviceName: serviceName(), feature: "The newrelic subscriber" });
  return createSpanListener(otelApi(), pipeline.tracer, { content: captureContent(), langfuse: false, adoptIds: pipeline.adoptIds });
}
