/**
 * The LM layer's streaming as a user of the package sees it (imports by package name, dist/): a
 * streamed chat against the fake provider of `typelm/testing`, paced; an abort that the fake sees
 * close the connection early; ScriptedLM streaming in chunks.
 */
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { LM, type ChatOptions } from "typelm";
import { ScriptedLM, startFakeProvider, type FakeProvider } from "typelm/testing";

let fake: FakeProvider;
beforeAll(async () => { fake = await startFakeProvider({ stream: { chunkChars: 3 } }); });
afterAll(async () => { await fake.close(); });

const messages = [{ role: "user" as const, content: "hello there" }];

test("a streamed chat hands the reply over in the fake's chunks, with firstTokenMs", async () => {
  const deltas: string[] = [];
  const options: ChatOptions = { onDelta: (t) => deltas.push(t) };
  const lm = new LM("anthropic/claude-3-5-haiku-20241022", { apiKey: "sk-test-123456789", baseURL: fake.url });
  const r = await lm.chat({ messages }, options);
  expect(r.content).toBe("echo: hello there");
  expect(deltas).toEqual(["ech", "o: ", "hel", "lo ", "the", "re"]);
  expect(r.firstTokenMs).toBeGreaterThanOrEqual(0);
});

test("an abort reaches the socket: the fake counts the connection closed early", async () => {
  fake.reply("z".repeat(200), { stream: { chunkChars: 2, delayMs: 200 } });
  const controller = new AbortController();
  const lm = new LM("ollama/llama3.2:3b", { baseURL: fake.url });
  const error = await lm.chat({ messages }, { signal: controller.signal, onDelta: () => controller.abort() }).then(() => undefined, (e: unknown) => e);
  expect((error as Error).name).toBe("AbortError");
  await fake.whenClosedEarly(1);
  expect(fake.closedEarly).toBe(1);
  expect(fake.streams.at(-1)).toMatchObject({ closedEarly: true, ended: false });
});

test("ScriptedLM streams in chunks of its stream.chunkChars", async () => {
  const deltas: string[] = [];
  await new ScriptedLM(["abcdefg"], { stream: { chunkChars: 3 } }).chat({ messages }, { onDelta: (t) => deltas.push(t) });
  expect(deltas).toEqual(["abc", "def", "g"]);
});
