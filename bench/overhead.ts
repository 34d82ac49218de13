/**
 * Framework overhead: median microseconds per `Predict.call` with an instant in-process model,
 * typelm versus @ax-llm/ax on the same 3-input / 3-output task, in one process.
 *
 * Run with `npm run bench:overhead` (builds to dist/, then runs dist/bench/overhead.js).
 * Options (environment variables): BENCH_WARMUP (default 200), BENCH_ROUNDS (20), BENCH_BATCH (300).
 * See bench/README.md.
 */
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import { ax, AxMockAIService } from "@ax-llm/ax";
import type { AxChatRequest, AxChatResponse } from "@ax-llm/ax";
import { encode } from "gpt-tokenizer";
import { Predict, Signature } from "../lib/index.js";
import type { ChatMessage } from "../lib/index.js";
import { ScriptedLM } from "../lib/testing/index.js";
import { intFromEnv } from "./env.js";

// ---------------------------------------------------------------------------------------------
// Settings

const WARMUP = intFromEnv("BENCH_WARMUP", 200);
const ROUNDS = intFromEnv("BENCH_ROUNDS", 20);
const BATCH = intFromEnv("BENCH_BATCH", 300);
const TARGET_RATIO = 10;

const INPUTS = { question: "What is the capital of France?", count: 3, tone: "formal" } as const;
const EXPECTED = { answer: "ok", score: 0.5, label: "good" } as const;

// ---------------------------------------------------------------------------------------------
// typelm: Predict on a zod signature, ScriptedLM answering every call with the same object

const BenchSig = Signature.define({
  name: "Bench",
  description: "Answer the question in the requested tone, score your confidence and label the answer.",
  input: { question: z.string(), count: z.number(), tone: z.enum(["formal", "casual"]) },
  output: { answer: z.string(), score: z.number(), label: z.enum(["good", "bad", "neutral"]) },
});

const typelmLM = new ScriptedLM(() => ({ ...EXPECTED }));
const typelmPredict = new Predict(BenchSig);

async function typelmCall(): Promise<{ answer: string; score: number; label: string }> {
  return typelmPredict.call({ ...INPUTS }, { lm: typelmLM });
}

// ---------------------------------------------------------------------------------------------
// Ax: AxGen (via `ax(...)`) on the equivalent string signature, AxMockAIService answering instantly.
// Ax rejects `class` on input fields, so `tone` is a described string there (typelm keeps its enum).

const AX_SIGNATURE =
  '"Answer the question in the requested tone, score your confidence and label the answer." ' +
  'question:string, count:number, tone:string "formal or casual" -> answer:string, score:number, label:class "good, bad, neutral"';
const AX_REPLY = "Answer: ok\nScore: 0.5\nLabel: good";

let axLastRequest: Readonly<AxChatRequest<unknown>> | undefined;
const axReply: AxChatResponse = {
  results: [{ index: 0, content: AX_REPLY, finishReason: "stop" }],
  modelUsage: { ai: "mock", model: "mock", tokens: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } },
};
const axAI = new AxMockAIService<string>({
  name: "mock",
  // No streaming, no native functions, no native structured outputs: one plain chat completion.
  features: { functions: false, streaming: false, structuredOutputs: false },
  chatResponse: async (req: Readonly<AxChatRequest<unknown>>): Promise<AxChatResponse> => {
    axLastRequest = req;
    return axReply;
  },
});
const axGen = ax(AX_SIGNATURE);
// Optional machinery off: no streaming, no debug logging, no tracer/meter (Ax has none unless set
// globally), no validation retries or multi-step loops (one prompt render, one parse per call).
const AX_OPTIONS = { stream: false, debug: false, maxRetries: 0, maxSteps: 1 } as const;

async function axCall(): Promise<{ answer: string; score: number; label: string }> {
  const out = await axGen.forward(axAI, { ...INPUTS }, AX_OPTIONS);
  return { answer: out.answer, score: out.score, label: out.label };
}

// ---------------------------------------------------------------------------------------------
// Measurement

interface Contender {
  name: string;
  call: () => Promise<{ answer: string; score: number; label: string }>;
}

const contenders: Contender[] = [
  { name: "typelm", call: typelmCall },
  { name: "ax", call: axCall },
];

function checkResult(name: string, result: { answer: string; score: number; label: string }): void {
  if (result.answer !== EXPECTED.answer || result.score !== EXPECTED.score || result.label !== EXPECTED.label) {
    throw new Error(
      `${name} did not parse the scripted reply: expected ${JSON.stringify(EXPECTED)}, got ${JSON.stringify(result)}`,
    );
  }
}

/**
 * A young-generation collection before each batch, so one library's short-lived garbage is not
 * scavenged on the other's time. (A full `gc()` is deliberately avoided: it shrinks the heap and
 * measurably slowed Ax's following batches.) `node dist/bench/overhead.js` runs without
 * --expose-gc, so the flag is set at run time and `gc` taken from a fresh context.
 */
const minorGC: () => void = (() => {
  setFlagsFromString("--expose-gc");
  const gc: unknown = runInNewContext("gc");
  if (typeof gc !== "function") return () => {};
  return () => (gc as (options: { type: "minor" }) => void)({ type: "minor" });
})();

interface BatchResult {
  /** Wall time of the whole batch divided by its calls (includes GC and event-loop turns), in µs. */
  perCall: number;
  /** Each call's own wall time, in µs. */
  calls: Float64Array;
}

/** Runs `n` sequential calls, timing the batch and each call. */
async function batch(contender: Contender, n: number): Promise<BatchResult> {
  // ScriptedLM keeps every request it receives; drop them so its memory does not grow over the run.
  typelmLM.requests.length = 0;
  minorGC();
  const calls = new Float64Array(n);
  const started = performance.now();
  let last = started;
  for (let i = 0; i < n; i++) {
    await contender.call();
    const now = performance.now();
    calls[i] = (now - last) * 1000;
    last = now;
  }
  return { perCall: ((last - started) * 1000) / n, calls };
}

/** Nearest-rank percentile of an unsorted sample. */
function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Array.from(values).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

function median(values: ArrayLike<number>): number {
  const sorted = Array.from(values).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = Math.floor(n / 2);
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function countTokens(messages: readonly { role: string; content: string }[]): number {
  return messages.reduce((n, m) => n + encode(m.content).length, 0);
}

function axPromptMessages(req: Readonly<AxChatRequest<unknown>> | undefined): { role: string; content: string }[] {
  if (req === undefined) throw new Error("AxMockAIService never received a chat request");
  const out: { role: string; content: string }[] = [];
  for (const m of req.chatPrompt) {
    if (m.role !== "system" && m.role !== "user") continue;
    let content: string;
    if (typeof m.content === "string") content = m.content;
    else {
      content = "";
      for (const part of m.content) {
        if (part.type !== "text") throw new Error(`unexpected non-text prompt part in the Ax request: ${part.type}`);
        content += part.text;
      }
    }
    out.push({ role: m.role, content });
  }
  return out;
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  // Correctness first: each library must actually parse its model's reply into the typed values.
  for (const c of contenders) checkResult(c.name, await c.call());

  // Prompts as sent (typelm: first request the ScriptedLM saw; Ax: last chat prompt the mock saw).
  const firstTypelm = typelmLM.requests[0];
  if (firstTypelm === undefined) throw new Error("ScriptedLM received no request");
  const typelmMessages: ChatMessage[] = firstTypelm.messages;
  const axMessages = axPromptMessages(axLastRequest);
  const tokens = { typelm: countTokens(typelmMessages), ax: countTokens(axMessages) };

  // Warm-up, interleaved so neither library gets the JIT to itself.
  for (let i = 0; i < WARMUP; i++) {
    for (const c of contenders) await c.call();
  }

  // Measured rounds: each round runs one batch per library, alternating which goes first.
  const batches = new Map<string, BatchResult[]>(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse();
    for (const c of order) batches.get(c.name)!.push(await batch(c, BATCH));
  }

  // Still correct after the run (guards against a library short-circuiting or caching wrongly).
  for (const c of contenders) checkResult(c.name, await c.call());

  const stats = contenders.map((c) => {
    const results = batches.get(c.name)!;
    const perCall = results.map((b) => b.perCall);
    const single = new Float64Array(results.reduce((n, b) => n + b.calls.length, 0));
    let at = 0;
    for (const b of results) {
      single.set(b.calls, at);
      at += b.calls.length;
    }
    return {
      name: c.name,
      median: median(perCall),
      p90: percentile(perCall, 90),
      min: Math.min(...perCall),
      singleMedian: median(single),
      tokens: c.name === "typelm" ? tokens.typelm : tokens.ax,
    };
  });
  const typelmStats = stats.find((s) => s.name === "typelm")!;
  const axStats = stats.find((s) => s.name === "ax")!;
  const ratio = axStats.median / typelmStats.median;
  const singleRatio = axStats.singleMedian / typelmStats.singleMedian;

  console.log(`Predict.call overhead, instant in-process model, 3 inputs / 3 outputs`);
  console.log(
    `node ${process.version}, warm-up ${WARMUP} calls each, ${ROUNDS} interleaved rounds x ${BATCH} calls each; ` +
      `median/p90/min are over the batches' per-call means, "1-call median" over every call timed alone`,
  );
  console.log("");
  const header = ["library", "median us/call", "p90 us/call", "min us/call", "1-call median us", "prompt tokens (o200k)"];
  const rows = stats.map((s) => [s.name, fmt(s.median), fmt(s.p90), fmt(s.min), fmt(s.singleMedian), String(s.tokens)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  console.log("");
  console.log(`prompt tokens: typelm ${tokens.typelm}, ax ${tokens.ax} (system + user messages, gpt-tokenizer o200k)`);
  console.log(`1-call median ratio (ax/typelm): ${fmt(singleRatio)}x`);
  console.log(`overhead ratio (ax/typelm): ${fmt(ratio)}x  target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? "PASS" : "MISS"}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
