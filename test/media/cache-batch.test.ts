import { afterEach, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { Resvg } from "@resvg/resvg-js";
import { z } from "zod";
import { resetConfiguration } from "../../lib/config.js";
import { ConfigurationError } from "../../lib/errors.js";
import { BatchClient } from "../../lib/lm/batch.js";
import { cacheRequestJson } from "../../lib/lm/cache.js";
import { Audio, Image } from "../../lib/media/media.js";
import { Predict } from "../../lib/predict/predict.js";
import { Signature } from "../../lib/signature/signature.js";
import { t } from "../../lib/signature/temporal.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_MODELS, TEST_KEY, withFakeProvider } from "../lm/helpers.js";

// The response cache keys a media value by its sha256 (not its base64 text), and provider batches
// carry the same parts as live calls, refused before any upload when the provider cannot take them.

const render = (fill: string): Uint8Array =>
  new Uint8Array(new Resvg(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="${fill}"/></svg>`).render().asPng());
const red = render("red");
const green = render("green");
const mp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(413)]);
const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

class Describe extends Signature {
  static override description = "Name the colour of the picture.";
  static override input = { photo: t.image() };
  static override output = { answer: z.string() };
}

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
afterEach(() => resetConfiguration());

describe("the response cache and media", () => {
  it("answers the same bytes (another Image of them) from the cache, and asks again for other bytes", async () => {
    const lm = lmFor("openai", fake, { cache: { path: ":memory:" } });
    const predict = new Predict(Describe);
    fake.reply({ answer: "red" });
    fake.reply({ answer: "green" });
    const first = await predict.call({ photo: Image.fromBytes(red) }, { lm });
    const again = await predict.call({ photo: Image.fromBytes(Buffer.from(red)) }, { lm });
    const other = await predict.call({ photo: Image.fromBytes(green) }, { lm });
    expect([first.answer, again.answer, other.answer]).toEqual(["red", "red", "green"]);
    expect(fake.requests.map((r) => r.media[0]!.sha256)).toEqual([sha(red), sha(green)]);
  }, 30_000);

  it("the stored request names each value by kind, type and sha256, and holds no base64 text", () => {
    const photo = Image.fromBytes(red);
    const json = cacheRequestJson({
      provider: "openai", endpoint: "x", model: "m", temperature: undefined, maxTokens: undefined, responseSchema: undefined,
      messages: [{ role: "user", content: '"photo":"[image 1 below]"', media: [{ name: "photo", value: photo }] }],
    });
    expect(JSON.parse(json).messages[0].media).toEqual([{ kind: "image", mediaType: "image/png", sha256: sha(red) }]);
    expect(json).not.toContain(Buffer.from(red).toString("base64").slice(0, 24));
  });
});

describe("provider batches with media", () => {
  const request = (photo: Image) => ({ messages: new Predict(Describe).prompt().messages({ photo }) });

  it.each(["openai", "anthropic"] as const)("%s: each batch line carries the image part of the live body", async (wire) => {
    const client = new BatchClient(PROVIDER_MODELS[wire], { apiKey: TEST_KEY, baseURL: wire === "openai" ? fake.openaiBaseURL : fake.url, pollInterval: 0.001 });
    fake.batch({});
    await client.submit([{ customId: "a", request: request(Image.fromBytes(red)) }, { customId: "b", request: request(Image.fromBytes(green)) }]);
    const lines = fake.batches[0]!.requests;
    expect(lines.map((r) => [r.batch?.customId, r.media.map((m) => [m.kind, m.mediaType, m.sha256])])).toEqual([
      ["a", [["image", "image/png", sha(red)]]],
      ["b", [["image", "image/png", sha(green)]]],
    ]);
  }, 30_000);

  it("anthropic: audio in a batch is a ConfigurationError before any upload", async () => {
    const client = new BatchClient(PROVIDER_MODELS.anthropic, { apiKey: TEST_KEY, baseURL: fake.url, pollInterval: 0.001 });
    const messages = [{ role: "user" as const, content: "[audio 1 below]", media: [{ name: "clip", value: Audio.fromBytes(mp3) }] }];
    await expect(client.submit([{ customId: "a", request: { messages } }])).rejects.toThrow(ConfigurationError);
    expect(fake.batches).toHaveLength(0);
    expect(fake.requests).toHaveLength(0);
  }, 30_000);
});
