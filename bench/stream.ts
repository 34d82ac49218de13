/**
 * bench/stream.ts: what streaming costs and how early it reports a field, typelm vs the raw chunks
 * and vs Ax's `streamingForward`, in one process, with no network.
 *
 * (a) CPU per chunk: the same reply (a fenced JSON block, as models answer Enhanced Prompting) cut
 *     into 4-character chunks, 1,000 and 20,000 of them, delivered through an async generator (as
 *     an SDK's stream is), consumed three ways: the raw chunks (concatenated), `Predict.call` (the
 *     model reads the same chunks; no events), `Predict.stream` iterated to the end. CPU time
 *     (process.cpuUsage) per run, median over runs, divided by the chunk count.
 * (b) Delay: for each output field, the chunk that completes its value in the reply, and the chunk
 *     last handed over when the `field` event reached the consumer, with the time in between.
 * (c) The same for Ax: an AxMockAIService that streams (ReadableStream, highWaterMark 0, so a chunk
 *     is handed over only when Ax asks for it) the same values in Ax's own reply format
 *     (`Label: good\nScore: 0.5\nAnswer: ...`: Ax does not read a JSON block), cut into the same
 *     4-character chunks; a field counts as seen when a delta holds its whole value.
 *
 * (d) CPU per chunk through the openai SDK, which is what the target (typelm's stream at most 1.5×
 *     the raw chunks) is about: the fake provider runs in a child process (bench/stream-server.ts),
 *     so `process.cpuUsage` counts the client alone, and streams the same JSON reply in 4-character
 *     chunks as OpenAI server-sent events. The same SDK (`openai`, the client typelm's LM builds,
 *     no retries) reads the same chunks two ways: raw (`chat.completions.create({ stream: true })`,
 *     iterated, each delta's text concatenated) and `Predict.stream` (an LM pointed at the fake, no
 *     response cache; every event iterated). typelm's fixed cost per call (prompt, conversion,
 *     instrumentation) is counted, spread over the chunks. Two pacings: "burst" (the server writes
 *     every chunk at once: many chunks per network read, as when a client falls behind) and "paced"
 *     (1 ms between chunks: one chunk per read, as a model writes).
 *
 * Fairness: in (a) and (d) both consumers get the same chunks from the same source in the same
 * process state (runs interleaved, after the same warm-up); the raw consumer does the least work a
 * consumer can (keep the text); typelm's consumer iterates every event it is given.
 *
 * Run: `npm run bench:stream`.
 */
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { ax, AxMockAIService } from "@ax-llm/ax";
import type { AxChatResponse } from "@ax-llm/ax";
import { BaseLM } from "../lib/lm/base.js";
import type { ChatOptions, LMRequest, LMResponse } from "../lib/lm/types.js";
import { Predict, Signature } from "../lib/index.js";
import { LM } from "../lib/lm/lm.js";
import { intFromEnv } from "./env.js";
import { fork } from "node:child_process";
import OpenAI from "openai";

const CHUNK = 4;
const Bench = Signature.define({
  name: "Bench",
  description: "Label the question, score your confidence and answer it.",
  input: { question: z.string() },
  output: { label: z.enum(["good", "bad", "neutral"]), score: z.number(), answer: z.string() },
});

/** Values whose reply is about `chunks` chunks long. */
function values(chunks: number): { label: string; score: number; answer: string } {
  const words = "the answer keeps going with plain words ";
  const length = Math.max(0, chunks * CHUNK - 60);
  return { label: "good", score: 0.5, answer: words.repeat(Math.ceil(length / words.length)).slice(0, length) };
}

const typelmReply = (v: object): string => "```json\n" + JSON.stringify(v, null, 2) + "\n```";
const axReply = (v: { label: string; score: number; answer: string }): string => `Label: ${v.label}\nScore: ${v.score}\nAnswer: ${v.answer}`;
const cut = (text: string): string[] => text.match(/[\s\S]{1,4}/g) ?? [];

/** Hands the reply's chunks over one by one through an async generator; `onChunk` sees each index first. */
async function* chunksOf(chunks: readonly string[], onChunk?: (i: number) => void): AsyncGenerator<string> {
  for (let i = 0; i < chunks.length; i++) {
    onChunk?.(i);
    yield chunks[i]!;
  }
}

/** A model that streams a fixed reply through an async generator, as an SDK stream does. */
class StreamingLM extends BaseLM {
  readonly provider = "bench";
  readonly model = "stream";
  onChunk: ((i: number) => void) | undefined;
  constructor(private readonly chunks: readonly string[]) {
    super();
  }
  supportsStructuredOutputs(): boolean {
    return false;
  }
  protected async complete(_request: LMRequest, options?: ChatOptions): Promise<LMResponse> {
    let content = "";
    for await (const piece of chunksOf(this.chunks, this.onChunk)) {
      content += piece;
      options?.onDelta?.(piece);
    }
    return { content, usage: { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, provider: this.provider, model: this.model, estimatedCost: 0, cached: false };
  }
}

const predict = new Predict(Bench);
const inputs = { question: "How far does it go?" };

async function rawRun(chunks: readonly string[]): Promise<number> {
  let text = "";
  for await (const piece of chunksOf(chunks)) text += piece;
  return text.length;
}

async function callRun(lm: StreamingLM): Promise<number> {
  const r = await predict.call(inputs, { lm });
  return r.answer.length;
}

async function streamRun(lm: BaseLM): Promise<number> {
  const s = predict.stream(inputs, { lm });
  let events = 0;
  for await (const _ of s) events++;
  const r = await s.result;
  return r.answer.length + events * 0;
}

function axService(chunks: readonly string[], onChunk?: (i: number) => void): AxMockAIService<string> {
  return new AxMockAIService<string>({
    name: "mock",
    features: { functions: false, streaming: true, structuredOutputs: false },
    chatResponse: async () => {
      let i = 0;
      return new ReadableStream<AxChatResponse>({
        pull(controller) {
          if (i < chunks.length) {
            onChunk?.(i);
            controller.enqueue({ results: [{ index: 0, content: chunks[i++]! }] });
            return;
          }
          controller.enqueue({
            results: [{ index: 0, content: "", finishReason: "stop" }],
            modelUsage: { ai: "mock", model: "mock", tokens: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } },
          });
          controller.close();
        },
      }, { highWaterMark: 0 });
    },
  });
}

const axGen = ax('"Label the question, score your confidence and answer it." question:string -> label:class "good, bad, neutral", score:number, answer:string');
const AX_OPTIONS = { debug: false, maxRetries: 0, maxSteps: 1 } as const;

/** Ax's streamed values, accumulated: string deltas appended, other values replaced. */
async function axRun(ai: AxMockAIService<string>, onValues?: (acc: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
  const acc: Record<string, unknown> = {};
  for await (const d of axGen.streamingForward(ai, inputs, AX_OPTIONS)) {
    for (const [k, v] of Object.entries(d.delta as Record<string, unknown>)) {
      acc[k] = typeof v === "string" && typeof acc[k] === "string" && k === "answer" ? (acc[k] as string) + v : v;
    }
    onValues?.(acc);
  }
  return acc;
}

function cpuMicros<T>(fn: () => Promise<T>): Promise<{ us: number; value: T }> {
  const start = process.cpuUsage();
  return fn().then((value) => {
    const d = process.cpuUsage(start);
    return { us: d.user + d.system, value };
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function partA(n: number, runs: number): Promise<string[]> {
  const v = values(n);
  const chunks = cut(typelmReply(v));
  const axChunks = cut(axReply(v));
  const lm = new StreamingLM(chunks);
  const check = (name: string, length: number): void => {
    if (length !== v.answer.length) throw new Error(`${name} did not read the whole answer: ${length} vs ${v.answer.length}`);
  };
  const times: Record<string, number[]> = { raw: [], call: [], stream: [], ax: [] };
  // Warm-up, then interleaved runs.
  for (let i = 0; i < 3; i++) {
    check("raw", (await rawRun(chunks)) - (chunks.join("").length - v.answer.length));
    check("call", await callRun(lm));
    check("stream", await streamRun(lm));
    check("ax", String((await axRun(axService(axChunks))).answer ?? "").length);
  }
  for (let r = 0; r < runs; r++) {
    times.raw!.push((await cpuMicros(() => rawRun(chunks))).us);
    times.call!.push((await cpuMicros(() => callRun(lm))).us);
    times.stream!.push((await cpuMicros(() => streamRun(lm))).us);
    times.ax!.push((await cpuMicros(() => axRun(axService(axChunks)))).us);
  }
  const per = (k: string, count: number): number => median(times[k]!) / count;
  const raw = per("raw", chunks.length);
  const call = per("call", chunks.length);
  const stream = per("stream", chunks.length);
  const axPer = per("ax", axChunks.length);
  return [
    `${n}`, `${chunks.length}`, raw.toFixed(3), call.toFixed(3), stream.toFixed(3),
    (stream / raw).toFixed(2), (stream / call).toFixed(2), axPer.toFixed(3), `${runs}`,
  ];
}

/** The fake provider in a child process (bench/stream-server.ts). */
interface Server {
  url: string;
  queue(reply: string, times: number, delayMs: number): Promise<void>;
  close(): void;
}

async function startServer(): Promise<Server> {
  const child = fork(new URL("./stream-server.js", import.meta.url));
  const url = await new Promise<string>((resolve) => child.once("message", (m: { url: string }) => resolve(m.url)));
  return {
    url,
    queue: (reply, times, delayMs) => new Promise((resolve) => {
      child.once("message", () => resolve());
      child.send({ reply, times, delayMs });
    }),
    close: () => child.disconnect(),
  };
}

async function sdkRawRun(client: OpenAI): Promise<number> {
  const s = await client.chat.completions.create({
    model: "gpt-4o-mini", messages: [{ role: "user", content: inputs.question }], stream: true, stream_options: { include_usage: true },
  });
  let text = "";
  for await (const chunk of s) text += chunk.choices[0]?.delta?.content ?? "";
  return text.length;
}

async function partSdk(server: Server, n: number, runs: number, delayMs: number): Promise<string[]> {
  const v = values(n);
  const reply = typelmReply(v);
  const chunks = cut(reply).length;
  const client = new OpenAI({ apiKey: "bench", baseURL: `${server.url}/v1`, maxRetries: 0, logLevel: "off" });
  const lm = new LM("openai/gpt-4o-mini", { apiKey: "bench", baseURL: `${server.url}/v1`, cache: false });
  await server.queue(reply, 2 * (runs + 2), delayMs);
  const times: Record<string, number[]> = { raw: [], stream: [] };
  for (let i = 0; i < 2; i++) {
    if ((await sdkRawRun(client)) !== reply.length) throw new Error("raw SDK run did not read the whole reply");
    if ((await streamRun(lm)) !== v.answer.length) throw new Error("stream run did not read the whole answer");
  }
  for (let r = 0; r < runs; r++) {
    times.raw!.push((await cpuMicros(() => sdkRawRun(client))).us);
    times.stream!.push((await cpuMicros(() => streamRun(lm))).us);
  }
  const raw = median(times.raw!) / chunks;
  const stream = median(times.stream!) / chunks;
  return [delayMs === 0 ? "burst" : `paced (${delayMs} ms)`, `${chunks}`, raw.toFixed(3), stream.toFixed(3), (stream / raw).toFixed(2), `${runs}`];
}

/** The index of the chunk holding character `at`. */
const chunkOf = (at: number): number => Math.floor(at / CHUNK);

async function partB(n: number): Promise<string[][]> {
  const v = values(n);
  const reply = typelmReply(v);
  const chunks = cut(reply);
  // The character that completes each value: a string's closing quote, a number's following delimiter.
  const complete: Record<string, number> = {
    label: reply.indexOf('"good"') + 5,
    score: reply.indexOf("0.5") + 3,
    answer: reply.lastIndexOf('"'),
  };
  const lm = new StreamingLM(chunks);
  const handed: number[] = [];
  let last = -1;
  lm.onChunk = (i) => {
    last = i;
    handed[i] = performance.now();
  };
  const rows: string[][] = [];
  const s = predict.stream(inputs, { lm });
  for await (const e of s) {
    if (e.type !== "field") continue;
    const c = chunkOf(complete[e.name]!);
    rows.push(["typelm", e.name, `${c}`, `${last}`, `${last - c}`, ((performance.now() - handed[c]!) * 1000).toFixed(0)]);
  }
  await s.result;

  const text = axReply(v);
  const axChunks = cut(text);
  const axComplete: Record<string, number> = {
    label: text.indexOf("\n"),
    score: text.indexOf("\n", text.indexOf("Score:")),
    answer: text.length - 1,
  };
  const axHanded: number[] = [];
  let axLast = -1;
  const seen = new Set<string>();
  await axRun(axService(axChunks, (i) => {
    axLast = i;
    axHanded[i] = performance.now();
  }), (acc) => {
    for (const name of ["label", "score", "answer"] as const) {
      if (seen.has(name) || acc[name] !== v[name]) continue;
      seen.add(name);
      const c = chunkOf(axComplete[name]!);
      rows.push(["Ax", name, `${c}`, `${axLast}`, `${axLast - c}`, ((performance.now() - axHanded[c]!) * 1000).toFixed(0)]);
    }
  });
  return rows;
}

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

async function main(): Promise<void> {
  const runsSmall = intFromEnv("BENCH_STREAM_RUNS_1K", 60);
  const runsLarge = intFromEnv("BENCH_STREAM_RUNS_20K", 8);
  console.log(`node ${process.version}, ${process.platform} ${process.arch}`);
  console.log("\n(a) CPU µs per chunk (median over runs)\n");
  const a = [await partA(1000, runsSmall), await partA(20000, runsLarge)];
  console.log(table(["chunks asked", "typelm chunks", "raw", "Predict.call", "Predict.stream", "stream / raw", "stream / call", "Ax streamingForward", "runs"], a));
  console.log("\n(b, c) field events: the chunk that completes the value, the last chunk handed over when the consumer saw the field\n");
  const b = [...(await partB(1000)), ...(await partB(20000))];
  console.log(table(["library", "field", "completing chunk", "chunk handed over when seen", "chunks late", "µs after the completing chunk"], b));

  console.log("\n(d) CPU µs per chunk through the openai SDK, fake provider in a child process (median over runs)\n");
  const server = await startServer();
  try {
    const d = [
      await partSdk(server, 1000, intFromEnv("BENCH_STREAM_SDK_RUNS_1K", 15), 0),
      await partSdk(server, 1000, intFromEnv("BENCH_STREAM_SDK_RUNS_1K", 15), 1),
      await partSdk(server, 20000, intFromEnv("BENCH_STREAM_SDK_RUNS_20K", 5), 0),
      await partSdk(server, 20000, intFromEnv("BENCH_STREAM_SDK_RUNS_20K_PACED", 3), 1),
    ];
    console.log(table(["pacing", "chunks", "raw SDK stream", "Predict.stream", "stream / raw", "runs"], d));
  } finally {
    server.close();
  }
}

await main();
