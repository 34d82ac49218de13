import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Instrumentation, Predict, Signature, configure, resetConfiguration } from "../../lib/index.js";
import { shutdownPipelines } from "../../lib/instrument/otel-export.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedExport } from "../instrument/otlp-receiver.js";

const Echo = Signature.define({ name: "Echo", input: { text: z.string() }, output: { text: z.string() } });

const COLLECTOR_TOKEN = "collector-SECRET-0001";
const TRACES_TOKEN = "traces-SECRET-0002";
const LANGFUSE_PUBLIC = "pk-lf-headers-public-1";
const LANGFUSE_SECRET = "sk-lf-headers-SECRET-1";
const NR_LICENSE = "nr-headers-LICENSE-0003";
const LANGFUSE_BASIC = `Basic ${Buffer.from(`${LANGFUSE_PUBLIC}:${LANGFUSE_SECRET}`).toString("base64")}`;

const VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "LANGFUSE_HOST",
  "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "NEW_RELIC_OTLP_ENDPOINT", "NEW_RELIC_LICENSE_KEY",
];
const saved = Object.fromEntries(VARIABLES.map((v) => [v, process.env[v]]));
const receivers: OtlpReceiver[] = [];

afterEach(async () => {
  resetConfiguration();
  Instrumentation.reset();
  await shutdownPipelines();
  for (const r of receivers.splice(0)) await r.close();
  for (const v of VARIABLES) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});
afterAll(() => Instrumentation.reset());

async function receiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  receivers.push(r);
  return r;
}

/** Every header value a receiver got, as one text. */
const headerText = (r: OtlpReceiver): string => JSON.stringify(r.received.map((x: ReceivedExport) => x.headers));

describe("each exporter sends only its own headers", () => {
  it("OTEL_EXPORTER_OTLP_HEADERS and ..._TRACES_HEADERS go to the OTLP endpoint, never to Langfuse or New Relic", async () => {
    const [collector, langfuse, newrelic] = [await receiver(), await receiver(), await receiver()];
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${COLLECTOR_TOKEN}`,
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: `x-traces-token=${TRACES_TOKEN}`,
      LANGFUSE_HOST: langfuse.url, LANGFUSE_PUBLIC_KEY: LANGFUSE_PUBLIC, LANGFUSE_SECRET_KEY: LANGFUSE_SECRET,
      NEW_RELIC_OTLP_ENDPOINT: newrelic.url, NEW_RELIC_LICENSE_KEY: NR_LICENSE,
    });
    configure((c) => {
      c.instrumentation.enabled = true;
      c.instrumentation.subscribers = ["otel", "langfuse", "newrelic"];
    });
    await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "echo hi" }]) });
    await Instrumentation.flush();

    for (const r of [collector, langfuse, newrelic]) expect(r.received.length).toBeGreaterThan(0);
    // The collector gets its headers (so their absence elsewhere means something) and nobody else's.
    expect(collector.received[0]!.headers["x-collector-token"]).toBe(COLLECTOR_TOKEN);
    expect(collector.received[0]!.headers["x-traces-token"]).toBe(TRACES_TOKEN);
    expect(collector.received[0]!.headers.authorization).toBeUndefined();
    expect(collector.received[0]!.headers["api-key"]).toBeUndefined();
    // Langfuse and New Relic get their own credential only.
    expect(langfuse.received[0]!.headers.authorization).toBe(LANGFUSE_BASIC);
    expect(newrelic.received[0]!.headers["api-key"]).toBe(NR_LICENSE);
    for (const vendor of [langfuse, newrelic]) {
      const text = headerText(vendor);
      for (const foreign of [COLLECTOR_TOKEN, TRACES_TOKEN, "x-collector-token", "x-traces-token"]) expect(text).not.toContain(foreign);
    }
    expect(headerText(langfuse)).not.toContain(NR_LICENSE);
    expect(headerText(newrelic)).not.toContain(LANGFUSE_SECRET);
    expect(headerText(newrelic)).not.toContain(LANGFUSE_BASIC);
    // The variables are still there for the generic exporter (and anything else in the process) to read.
    expect(process.env["OTEL_EXPORTER_OTLP_HEADERS"]).toBe(`x-collector-token=${COLLECTOR_TOKEN}`);
    expect(process.env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"]).toBe(`x-traces-token=${TRACES_TOKEN}`);
  });
});
