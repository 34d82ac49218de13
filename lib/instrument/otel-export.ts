/**
 * OTLP/HTTP export through the official SDK, loaded only when a subscriber that needs it is switched
 * on. Never in the way of a call: a span's end only enqueues it (queue of MAX_QUEUE spans; beyond that
 * spans are dropped, not waited for); batches go out in the background, each export abandoned after
 * the export timeout; `flush` waits at most that timeout plus a margin and never rejects.
 */
import type * as OTelApi from "@opentelemetry/api";
import type * as SdkTraceBase from "@opentelemetry/sdk-trace-base";
import type * as OtlpHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as Resources from "@opentelemetry/resources";
import { loadOnFirstUse } from "../load-sync.js";
import { requireOptional } from "../optional-packages.js";
import { registerFlusher } from "./bus.js";

const MAX_QUEUE = 2048;
const MAX_BATCH = 512;
const BATCH_DELAY_MS = 1000;
const DEFAULT_TIMEOUT_MS = 5000;
/** How long past the export timeout `flush` waits before giving up on a stuck exporter. */
const FLUSH_MARGIN_MS = 500;

const loadOtelApi = loadOnFirstUse<typeof OTelApi>("@opentelemetry/api");

/**
 * `@opentelemetry/api`, loaded on first use (it is small, but nothing loads before it is needed).
 * A regular dependency, unlike the SDK: an application that registers its own tracer provider needs
 * nothing more for the `otel` subscriber.
 */
export function otelApi(): typeof OTelApi {
  return loadOtelApi();
}

/** Export timeout in milliseconds: `OTEL_EXPORTER_OTLP_TIMEOUT` (the OpenTelemetry variable), else 5000. */
function exportTimeoutMs(): number {
  const fromEnv = Number(process.env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_TIMEOUT_MS;
}

export interface ExportTarget {
  /**
   * Full traces URL of a vendor (Langfuse, New Relic): the exporter then takes its URL and headers
   * from here only. Omitted, it is the generic OTLP exporter and reads the standard
   * `OTEL_EXPORTER_OTLP_*` variables (endpoint, headers, certificates, compression).
   */
  url?: string;
  headers?: Record<string, string>;
  serviceName: string;
  /** What exports, named in the error when the SDK is not installed ("The langfuse subscriber"); not part of the pipeline's identity. */
  feature?: string;
}

export interface Pipeline {
  tracer: OTelApi.Tracer;
  /** The ids the next span started on `tracer` gets (then random again): typelm's own, so logs and traces share them. */
  adoptIds(traceId: string, spanId: string): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** One pipeline per destination, reused when `configure` runs again. */
const pipelines = new Map<string, Pipeline>();
let exitHookInstalled = false;

/** The export pipeline for `target`, created on first use. */
export function exportPipeline(target: ExportTarget): Pipeline {
  const key = JSON.stringify([target.url ?? "", target.headers ?? {}, target.serviceName]);
  let pipeline = pipelines.get(key);
  if (pipeline === undefined) {
    pipeline = createPipeline(target);
    pipelines.set(key, pipeline);
    installExitHook();
  }
  return pipeline;
}

function createPipeline(target: ExportTarget): Pipeline {
  // The SDK is an optional peer dependency: without it, a ConfigurationError with the install line.
  const feature = target.feature ?? "OTLP export";
  const { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator } = requireOptional<typeof SdkTraceBase>("@opentelemetry/sdk-trace-base", feature);
  const { OTLPTraceExporter } = requireOptional<typeof OtlpHttp>("@opentelemetry/exporter-trace-otlp-http", feature);
  const { resourceFromAttributes } = requireOptional<typeof Resources>("@opentelemetry/resources", feature);
  const timeoutMillis = exportTimeoutMs();
  const build = (): InstanceType<typeof OTLPTraceExporter> => new OTLPTraceExporter({
    ...(target.url === undefined ? {} : { url: target.url }),
    ...(target.headers === undefined ? {} : { headers: target.headers }),
    timeoutMillis,
  });
  // The SDK always merges the OTEL_EXPORTER_OTLP_* headers (and certificates) into what it is given:
  // a vendor's exporter must not send the collector's token to the vendor.
  const exporter = target.url === undefined ? build() : withoutOtlpVariables(build);
  const processor = new BatchSpanProcessor(exporter, {
    maxQueueSize: MAX_QUEUE, maxExportBatchSize: MAX_BATCH, scheduledDelayMillis: BATCH_DELAY_MS, exportTimeoutMillis: timeoutMillis,
  });
  // The SDK asks for ids synchronously inside startSpan (the trace id only for a root); the span
  // listener calls adoptIds just before each span it starts.
  const random = new RandomIdGenerator();
  let nextTrace: string | undefined;
  let nextSpan: string | undefined;
  const idGenerator = {
    generateTraceId: () => nextTrace ?? random.generateTraceId(),
    generateSpanId: () => nextSpan ?? random.generateSpanId(),
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": target.serviceName }),
    spanProcessors: [processor],
    idGenerator,
  });
  const flush = (): Promise<void> => bounded(provider.forceFlush(), timeoutMillis + FLUSH_MARGIN_MS);
  const withdraw = registerFlusher(flush);
  return {
    tracer: provider.getTracer("typelm"),
    adoptIds: (traceId, spanId) => {
      nextTrace = traceId;
      nextSpan = spanId;
    },
    flush,
    shutdown: async () => {
      withdraw();
      await bounded(provider.shutdown(), timeoutMillis + FLUSH_MARGIN_MS);
    },
  };
}

/** The collector's settings, which the SDK reads from the environment when an exporter is built. */
const OTLP_VARIABLE = /^OTEL_EXPORTER_OTLP_/;

/**
 * Runs `build` with every `OTEL_EXPORTER_OTLP_*` variable hidden, and puts them back before
 * returning. The SDK reads them only while the exporter is constructed (synchronously, so nothing
 * else runs in between): the exporter keeps what it was given and nothing of the collector's.
 */
function withoutOtlpVariables<T>(build: () => T): T {
  const hidden = Object.entries(process.env).filter(([name]) => OTLP_VARIABLE.test(name));
  for (const [name] of hidden) delete process.env[name];
  try {
    return build();
  } finally {
    for (const [name, value] of hidden) process.env[name] = value;
  }
}

/** Waits for `work` at most `ms`; never rejects (a collector's failure is not the caller's). */
function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((done) => {
    timer = setTimeout(done, ms);
    timer.unref();
  });
  return Promise.race([work.then(() => undefined, () => undefined), limit]).finally(() => clearTimeout(timer));
}

/** Sends what is pending when the process is about to exit normally (not on `process.exit()` or signals). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("beforeExit", () => {
    void Promise.allSettled([...pipelines.values()].map((p) => p.flush()));
  });
}

/** Flushes and closes every pipeline (tests; a process that wants to release sockets). */
export async function shutdownPipelines(): Promise<void> {
  const all = [...pipelines.values()];
  pipelines.clear();
  await Promise.allSettled(all.map((p) => p.shutdown()));
}
