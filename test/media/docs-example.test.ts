import { expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { Resvg } from "@resvg/resvg-js";
import { z } from "zod";
import { Image, LM, Predict, Signature, t } from "../../lib/index.js";
import { startFakeProvider } from "../../lib/testing/index.js";

// The example of docs/providers.md, "Images, audio and documents", run as written.

const pngBytes = new Uint8Array(new Resvg('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="red"/></svg>').render().asPng());

class Describe extends Signature {
  static override description = "Answer the question about the picture.";
  static override input = { photo: t.image(), question: z.string() };
  static override output = { answer: z.string() };
}

it("docs/providers.md: an image to Anthropic arrives as an image block", async () => {
  const fake = await startFakeProvider({ defaultReply: { answer: "a red square" } });
  try {
    const lm = new LM("anthropic/claude-sonnet-4-5", { apiKey: "sk-test", baseURL: fake.url });
    const photo = Image.fromBytes(pngBytes);
    const { answer } = await new Predict(Describe).call({ photo, question: "What is it?" }, { lm });
    expect(answer).toBe("a red square");
    expect(fake.requests[0]!.media).toEqual([{
      kind: "image", part: "image", mediaType: "image/png", bytes: pngBytes.length,
      sha256: createHash("sha256").update(pngBytes).digest("hex"), message: 0,
    }]);
  } finally {
    await fake.close();
  }
}, 30_000);
