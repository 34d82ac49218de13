import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How the receiver answers: accept, answer 500, or never answer. */
export type ReceiverMode = "ok" | "fail" | "hang";

export interface ReceivedExport {
  path: string;
  headers: IncomingHttpHeaders;
  /** Spans of the OTLP/JSON body, flattened: name, ids and attributes as plain values. */
  spans: { name: string; traceId: string; spanId: string; parentSpanId: string; attributes: Record<string, unknown> }[];
  /** `service.name` of the resource. */
  serviceName: unknown;
  body: string;
}

export interface OtlpReceiver {
  url: string;
  received: ReceivedExport[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

function plain(v: AnyValue): unknown {
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(plain);
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.stringValue ?? v.doubleValue ?? v.boolValue;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

function parse(path: string, headers: IncomingHttpHeaders, body: string): ReceivedExport {
  const doc = JSON.parse(body) as {
    resourceSpans: { resource?: { attributes?: KeyValue[] }; scopeSpans: { spans: { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: KeyValue[] }[] }[] }[];
  };
  const spans = doc.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).map((s) => ({
    name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? "", attributes: attrs(s.attributes),
  }));
  return { path, headers, spans, serviceName: attrs(doc.resourceSpans[0]?.resource?.attributes)["service.name"], body };
}

/** A loopback OTLP/HTTP (JSON) trace receiver on 127.0.0.1, for tests. */
export async function startOtlpReceiver(mode: ReceiverMode = "ok"): Promise<OtlpReceiver> {
  const received: ReceivedExport[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push(parse(req.url ?? "", req.headers, body));
      if (mode === "hang") return void hanging.push(res);
      res.writeHead(mode === "ok" ? 200 : 500, { "content-type": "application/json" });
      res.end(mode === "ok" ? "{}" : '{"error":"collector down"}');
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

/** A loopback address where nothing listens (connections are refused). */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return `http://127.0.0.1:${port}`;
}
