/**
 * The time to build a request holding a 5 MB image, per provider: the prompt's messages, the media
 * check and the provider's request body (what the SDK is handed), the response cache key, and the
 * body's JSON text (what the SDK sends). The first build of a value encodes its bytes as base64 and
 * hashes them; later builds of the same value reuse both, so they should cost a small fraction of
 * the first. The number of base64 encodings is counted (Buffer#toString("base64") calls), and the
 * same builds with a fresh Image each time show what the cache saves. Last, whole calls through the
 * OpenAI SDK to the fake provider (in this process) show the cost on the wire.
 *
 * Run with `npm run bench:media` (builds to dist/, then runs dist/bench/media.js).
 * Options (environment variables): BENCH_MEDIA_MB (5), BENCH_MEDIA_BUILDS (20).
 */
import { z } from "zod";
import { Image, LM, Predict, Signature, t } from "../lib/index.js";
import { cacheKey, cacheRequestJson } from "../lib/lm/cache.js";
import { checkRequestMedia } from "../lib/lm/media-check.js";
import { PROVIDERS } from "../lib/lm/providers/index.js";
import type { LMRequest } from "../lib/lm/types.js";
import { startFakeProvider } from "../lib/testing/index.js";
import { intFromEnv } from "./env.js";

const MB = intFromEnv("BENCH_MEDIA_MB", 5);
const BUILDS = intFromEnv("BENCH_MEDIA_BUILDS", 20);

class Describe extends Signature {
  static override description = "Describe the picture.";
  static override input = { photo: t.image(), question: z.string() };
  static override output = { answer: z.string() };
}

/** PNG signature and header, then pseudo-random bytes: sniffed as PNG, incompressible like a photo. */
function fiveMegabytePng(): Uint8Array {
  const bytes = new Uint8Array(MB * 1024 * 1024);
  let x = 2463534242;
  for (let i = 0; i < bytes.length; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  return bytes;
}

let encodings = 0;
const toString = Buffer.prototype.toString;
Buffer.prototype.toString = function (this: Buffer, ...args: Parameters<Buffer["toString"]>) {
  if (args[0] === "base64") encodings++;
  return toString.apply(this, args);
} as Buffer["toString"];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number): string => x.toFixed(x < 1 ? 3 : 1);

interface Row { provider: string; image: string; bytes: number; firstMs: number; laterMedianMs: number; laterMaxMs: number; bodyJsonMs: number; encodings: number }

/** BUILDS builds of one request: prompt messages, media check, provider body, cache key; then the body's JSON text once. */
function builds(provider: string, image: () => Image): Row {
  const predict = new Predict(Describe);
  const prompt = predict.prompt();
  const definition = PROVIDERS[provider]!;
  const model = provider === "anthropic" ? "claude-sonnet-4-5" : "gpt-4o-mini";
  const settings = { model, temperature: undefined, maxTokens: undefined, timeoutMs: 60_000 };
  const times: number[] = [];
  let body: object = {};
  const before = encodings;
  const fixed = image();
  const fresh = image() !== image();
  for (let i = 0; i < BUILDS; i++) {
    const photo = fresh ? image() : fixed;
    const started = performance.now();
    const request: LMRequest = { messages: prompt.messages({ photo, question: "What is in it?" }) };
    checkRequestMedia(provider, model, request.messages);
    body = definition.requestBody(request, settings);
    cacheKey(cacheRequestJson({ provider, endpoint: "bench", model, messages: request.messages, temperature: undefined, maxTokens: undefined, responseSchema: undefined }));
    times.push(performance.now() - started);
  }
  const jsonStarted = performance.now();
  JSON.stringify(body);
  const bodyJsonMs = performance.now() - jsonStarted;
  const later = times.slice(1);
  return { provider, image: fresh ? "a new Image each build" : "the same Image", bytes: fixed.size, firstMs: times[0]!, laterMedianMs: median(later), laterMaxMs: Math.max(...later), bodyJsonMs, encodings: encodings - before };
}

async function main(): Promise<void> {
  const bytes = fiveMegabytePng();
  const rows: Row[] = [];
  // Anthropic refuses an image whose base64 text passes 5 MB (the check says so before any call):
  // its rows use the largest image it takes, 3.75 MB.
  const anthropicBytes = bytes.subarray(0, (5 * 1024 * 1024 * 3) / 4);
  for (const provider of ["openai", "anthropic", "ollama"]) {
    const these = provider === "anthropic" ? anthropicBytes : bytes;
    let one: Image | undefined;
    // The same value each build (made at the first build, so its first build pays the encoding).
    rows.push(builds(provider, () => (one ??= Image.fromBytes(these))));
    rows.push(builds(provider, () => Image.fromBytes(these)));
  }
  console.log(`Building a request holding a ${MB} MB image (${bytes.length.toLocaleString("en-US")} bytes), ${BUILDS} builds each; Node ${process.version}\n`);
  console.log("| provider | image | bytes | 1st build ms | 2nd..Nth median ms | 2nd..Nth max ms | base64 encodings | body JSON text ms |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.provider} | ${r.image} | ${r.bytes.toLocaleString("en-US")} | ${ms(r.firstMs)} | ${ms(r.laterMedianMs)} | ${ms(r.laterMaxMs)} | ${r.encodings} | ${ms(r.bodyJsonMs)} |`);

  // Whole calls through the OpenAI SDK to the fake provider (HTTP on 127.0.0.1, in this process).
  const fake = await startFakeProvider({ defaultReply: { answer: "noise" } });
  try {
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-bench-media", baseURL: fake.openaiBaseURL });
    const photo = Image.fromBytes(bytes);
    const predict = new Predict(Describe);
    const calls: number[] = [];
    const before = encodings;
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await predict.call({ photo, question: "What is in it?" }, { lm });
      calls.push(performance.now() - started);
    }
    const arrived = fake.requests.every((r) => r.media[0]?.bytes === bytes.length);
    console.log(`\nWhole calls (openai SDK → fake provider), same Image, 10 calls: 1st ${ms(calls[0]!)} ms, 2nd..10th median ${ms(median(calls.slice(1)))} ms; base64 encodings by typelm and the SDK: ${encodings - before}; every request carried the ${bytes.length}-byte image: ${arrived}`);
  } finally {
    await fake.close();
  }
}

await main();
