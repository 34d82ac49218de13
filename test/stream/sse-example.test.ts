import { afterEach, describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { Predict, Signature } from "typelm";
import { sseHandler } from "../../docs/examples/sse-handler.js";
import { ChunkedLM } from "../helpers/chunked-lm.js";

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of the sentence.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["positive", "negative"]), summary: z.string() },
});
const summary = "The writer loves it and explains why at some length. ".repeat(5).trim();

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(lm: ChunkedLM): Promise<string> {
  const program = new Predict(Classify).configure((c) => (c.lm = lm));
  server = createServer(sseHandler(program, (url) => ({ sentence: url.searchParams.get("sentence") ?? "" })));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/classify?sentence=I%20love%20it`;
}

/** Reads server-sent events from a response body as they arrive; `onEvent` may stop the reading by returning true. */
async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (event: string, data: any) => boolean | void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)![1]!;
      if (onEvent(event, JSON.parse(/^data: (.*)$/m.exec(block)![1]!)) === true) return;
    }
  }
}

describe("the guide's server-sent events example (docs/streaming.md)", () => {
  it("is the code the guide shows", () => {
    const guide = readFileSync(new URL("../../docs/streaming.md", import.meta.url), "utf8");
    const code = readFileSync(new URL("../../docs/examples/sse-handler.ts", import.meta.url), "utf8");
    expect(guide).toContain("```ts\n" + code + "```");
  });

  it("streams partial and field events, then the prediction, to a client reading with fetch", async () => {
    const lm = new ChunkedLM([{ sentiment: "positive", summary }]);
    const response = await fetch(await serve(lm));
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const seen: Array<[string, any]> = [];
    let sentAtFirstField = -1;
    await readEvents(response.body!, (event, data) => {
      if (event === "field" && sentAtFirstField === -1) sentAtFirstField = lm.last.sent;
      seen.push([event, data]);
    });
    const fields = seen.filter(([e]) => e === "field").map(([, d]) => [d.name, d.value]);
    expect(fields).toEqual([["sentiment", "positive"], ["summary", summary]]);
    const partials = seen.filter(([e]) => e === "partial").map(([, d]) => d.partial.summary).filter((s) => typeof s === "string");
    expect(partials.some((s: string) => s.length > 0 && s.length < summary.length)).toBe(true);
    expect(seen[seen.length - 1]).toEqual(["done", { sentiment: "positive", summary }]);
    // The first field reached the client while the model was still writing.
    expect(sentAtFirstField).toBeGreaterThan(0);
    expect(sentAtFirstField).toBeLessThan(lm.last.total);
  });

  it("a client that disconnects aborts the model request", async () => {
    const lm = new ChunkedLM([{ sentiment: "positive", summary }]);
    const client = new AbortController();
    const response = await fetch(await serve(lm), { signal: client.signal });
    await readEvents(response.body!, (event) => event === "field");
    client.abort();
    await lm.last.ended;
    expect(lm.last.aborted).toBe(true);
    expect(lm.last.sent).toBeLessThan(lm.last.total);
  });
});
