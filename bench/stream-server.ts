/**
 * bench/stream-server.ts: the fake provider in a process of its own, for bench/stream.ts, so that
 * the CPU time the bench measures (its own process's) is the client's alone: the SDK reading the
 * stream, and typelm or the raw consumer on top. Messages from the parent queue streamed replies
 * (`{ reply, times, delayMs }`, answered `{ queued: true }`); the first message it sends is its URL.
 */
import { startFakeProvider } from "../lib/testing/fake-provider.js";

const fake = await startFakeProvider();
process.on("message", (m: { reply: string; times: number; delayMs: number }) => {
  for (let i = 0; i < m.times; i++) fake.reply(m.reply, { stream: { chunkChars: 4, delayMs: m.delayMs } });
  process.send!({ queued: true });
});
process.on("disconnect", () => void fake.close().then(() => process.exit(0)));
process.send!({ url: fake.url });
