// An in-memory OpenTelemetry tracer installed for one suite: the spans its tests end are in `exporter`.
import { afterAll, beforeAll } from "@jest/globals";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** Installs a global tracer provider exporting to memory before the suite's tests, removes it after. */
export function inMemoryTracer(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    await provider.shutdown();
  });
  return exporter;
}
