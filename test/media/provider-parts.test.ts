import { afterEach, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { Resvg } from "@resvg/resvg-js";
import { z } from "zod";
import { resetConfiguration } from "../../lib/config.js";
import { ConfigurationError, ValidationError } from "../../lib/errors.js";
import { Audio, Document, Image } from "../../lib/media/media.js";
import { t } from "../../lib/signature/temporal.js";
import { FewShotExample } from "../../lib/prompt/few-shot.js";
import { Predict } from "../../lib/predict/predict.js";
import { Signature } from "../../lib/signature/signature.js";
import type { FakeProvider, FakeRequest } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, withFakeProvider, type ProviderName } from "../lm/helpers.js";

// Media through the real SDKs to the fake provider: each provider × kind either arrives as the
// provider's own part (kind, media type and the bytes' sha256 as sent) or is refused before any
// request reaches the server.

const png = new Uint8Array(new Resvg('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="red"/></svg>').render().asPng());
const png2 = new Uint8Array(new Resvg('<svg xmlns="http://www.w3.org/2000/svg" width="6" height="6"><rect width="6" height="6" fill="blue"/></svg>').render().asPng());
const pdf = Buffer.from("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n");
const mp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(413)]);
const gif = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

class Describe extends Signature {
  static override description = "Answer the question about the picture.";
  static override input = { photo: t.image(), question: z.string() };
  static override output = { answer: z.string() };
}
class Listen extends Signature {
  static override description = "Answer the question about the clip.";
  static override input = { clip: t.audio(), question: z.string() };
  static override output = { answer: z.string() };
}
class Read extends Signature {
  static override description = "Answer the question about the paper.";
  static override input = { paper: t.document(), question: z.string() };
  static override output = { answer: z.string() };
}
class Compare extends Signature {
  static override description = "Say which picture is bigger.";
  static override input = { pictures: z.array(t.image()) };
  static override output = { answer: z.string() };
}

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
afterEach(() => resetConfiguration());

const REPLY = { answer: "a red square" };
const WIRE_MEDIA_TYPE = { image: "image/png", audio: "audio/mpeg", document: "application/pdf" } as const;
const PARTS: Record<ProviderName, Record<"image" | "audio" | "document", string | undefined>> = {
  openai: { image: "image_url", audio: "input_audio", document: "file" },
  anthropic: { image: "image", audio: undefined, document: "document" },
  ollama: { image: "images", audio: undefined, document: undefined },
};

const CASES = [
  { kind: "image" as const, signature: Describe, inputs: () => ({ photo: Image.fromBytes(png), question: "What colour?" }), bytes: png, field: "photo" },
  { kind: "audio" as const, signature: Listen, inputs: () => ({ clip: Audio.fromBytes(mp3), question: "What is said?" }), bytes: mp3, field: "clip" },
  { kind: "document" as const, signature: Read, inputs: () => ({ paper: Document.fromBytes(pdf), question: "What is the title?" }), bytes: pdf, field: "paper" },
];

/** The user message's text as the wire carried it (text part or string). */
function userText(req: FakeRequest): string {
  return req.messages.filter((m) => m.role === "user").at(-1)!.content;
}

describe("media as each provider's content parts, through the real SDKs", () => {
  for (const provider of PROVIDER_NAMES) {
    for (const c of CASES) {
      const part = PARTS[provider][c.kind];
      for (const streamed of [false, true]) {
        it(`${provider} × ${c.kind}${streamed ? " (streamed)" : ""}: ${part ? `arrives as ${part}` : "refused before any request"}`, async () => {
          const lm = lmFor(provider, fake);
          fake.reply(REPLY);
          const predict = new Predict(c.signature as typeof Describe);
          const run = streamed
            ? lm.chat({ messages: predict.prompt(lm.schemaFormat, lm.dataFormat).messages(c.inputs()) }, { onDelta: () => undefined })
            : predict.call(c.inputs() as never, { lm });
          if (part === undefined) {
            const error = await run.then(() => undefined, (e: unknown) => e);
            expect(error).toBeInstanceOf(ConfigurationError);
            expect(String((error as Error).message)).toContain(`input field "${c.field}"`);
            expect(fake.requests).toHaveLength(0);
            return;
          }
          await run;
          expect(fake.requests).toHaveLength(1);
          const req = fake.requests[0]!;
          expect(req.body.stream === true).toBe(streamed);
          expect(req.media).toEqual([expect.objectContaining({ kind: c.kind, part, mediaType: WIRE_MEDIA_TYPE[c.kind], bytes: c.bytes.length, sha256: sha(c.bytes) })]);
          // The text of the same message names the value; the question stays in the text.
          const text = userText(req);
          expect(text).toContain(`"${c.field}":"[${c.kind} 1 below]"`);
          expect(text).toContain(`${c.kind} 1 (${c.field})`);
          expect(text).toContain("What");
          expect(req.media[0]!.message).toBe(req.body.messages.length - 1);
          // No base64 text of the bytes in the text part.
          expect(text).not.toContain(Buffer.from(c.bytes).toString("base64").slice(0, 40));
        }, 30_000);
      }
    }
  }

  it("an array of images: each a part, in order, numbered in the text", async () => {
    for (const provider of PROVIDER_NAMES) {
      fake.reset();
      fake.reply(REPLY);
      await new Predict(Compare).call({ pictures: [Image.fromBytes(png), Image.fromBytes(png2)] }, { lm: lmFor(provider, fake) });
      const req = fake.requests[0]!;
      expect(req.media.map((m) => m.sha256)).toEqual([sha(png), sha(png2)]);
      expect(userText(req)).toContain(`"pictures":["[image 1 below]","[image 2 below]"]`);
      expect(userText(req)).toContain("image 1 (pictures[0]), image 2 (pictures[1])");
    }
  }, 30_000);

  it("demos holding media are earlier user turns with their parts, the answer an assistant turn", async () => {
    const demo = new FewShotExample({ input: { photo: Image.fromBytes(png2), question: "What colour?" }, output: { answer: "blue" } });
    for (const provider of PROVIDER_NAMES) {
      fake.reset();
      fake.reply(REPLY);
      const predict = new Predict(Describe);
      predict.demos = [demo];
      await predict.call({ photo: Image.fromBytes(png), question: "What colour?" }, { lm: lmFor(provider, fake) });
      const req = fake.requests[0]!;
      const roles = req.messages.map((m) => m.role);
      expect(roles).toEqual(["system", "user", "assistant", "user"]);
      expect(req.messages[2]!.content).toContain('"answer":"blue"');
      expect(req.messages[0]!.content).not.toContain("### Example 1");
      // The demo's image in the first user turn, the call's in the last.
      // `message` indexes the body's messages, where Anthropic has no system message.
      const shift = provider === "anthropic" ? 1 : 0;
      expect(req.media.map((m) => [m.message + shift, m.sha256])).toEqual([[1, sha(png2)], [3, sha(png)]]);
    }
  }, 30_000);

  it("an image URL goes as a URL where the provider fetches one (OpenAI, Anthropic) and is refused for Ollama", async () => {
    const url = "https://example.com/cat.png";
    for (const provider of ["openai", "anthropic"] as const) {
      fake.reset();
      fake.reply(REPLY);
      await new Predict(Describe).call({ photo: Image.fromUrl(url), question: "What?" }, { lm: lmFor(provider, fake) });
      expect(fake.requests[0]!.media).toEqual([expect.objectContaining({ kind: "image", url })]);
    }
    fake.reset();
    const error = await new Predict(Describe).call({ photo: Image.fromUrl(url), question: "What?" }, { lm: lmFor("ollama", fake) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("photo");
    expect(fake.requests).toHaveLength(0);
  }, 30_000);
});

describe("checks before any call", () => {
  it("a format the provider does not take is a ValidationError naming the field (GIF to Ollama), and no request is made", async () => {
    const error = await new Predict(Describe).call({ photo: Image.fromBytes(gif), question: "?" }, { lm: lmFor("ollama", fake) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("photo");
    expect((error as Error).message).toContain("image/gif");
    expect(fake.requests).toHaveLength(0);
    // OpenAI and Anthropic take GIF.
    fake.reply(REPLY);
    await new Predict(Describe).call({ photo: Image.fromBytes(gif), question: "?" }, { lm: lmFor("anthropic", fake) });
    expect(fake.requests[0]!.media[0]).toMatchObject({ mediaType: "image/gif", sha256: sha(gif) });
  }, 30_000);

  it("an image over the provider's size limit is refused (Anthropic: 5 MB of base64; OpenAI: 20 MB)", async () => {
    // A PNG header followed by zeros: 4 MB of bytes is 5.6 MB of base64, over Anthropic's limit, under OpenAI's.
    const big = new Uint8Array(4 * 1024 * 1024);
    big.set(png.subarray(0, 16));
    const error = await new Predict(Describe).call({ photo: Image.fromBytes(big), question: "?" }, { lm: lmFor("anthropic", fake) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("photo");
    expect((error as Error).message).toMatch(/too large for anthropic: its base64 text is 5,592,408 characters, over the 5 MB/);
    expect(fake.requests).toHaveLength(0);
    fake.reply(REPLY);
    await new Predict(Describe).call({ photo: Image.fromBytes(big), question: "?" }, { lm: lmFor("openai", fake) });
    expect(fake.requests[0]!.media[0]).toMatchObject({ bytes: big.length, sha256: sha(big) });
    const huge = new Uint8Array(21 * 1024 * 1024);
    huge.set(png.subarray(0, 16));
    fake.reset();
    const tooBig = await new Predict(Describe).call({ photo: Image.fromBytes(huge), question: "?" }, { lm: lmFor("openai", fake) }).catch((e: unknown) => e);
    expect(tooBig).toBeInstanceOf(ValidationError);
    expect((tooBig as Error).message).toContain("it is 21 MB, over the 20 MB openai takes per image");
    expect(fake.requests).toHaveLength(0);
  }, 60_000);

  it("bytes that are not the field's kind, sent through chat directly, are a ValidationError before any request", async () => {
    const lm = lmFor("openai", fake);
    const messages = [{ role: "user" as const, content: "x", media: [{ name: "photo", value: Image.fromBytes(pdf) }] }];
    const error = await lm.chat({ messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("photo");
    expect(fake.requests).toHaveLength(0);
  });
});
