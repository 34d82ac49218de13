/**
 * Media values through the package (dist/): their factories, base64 text and field checks are deferred
 * modules of the bundle (lib/media/media-impl.ts, sniff.ts; see scripts/deferred-modules.mjs), loaded
 * at the first call. The checks throw the package's own ValidationError with the same messages, and the
 * `t.image()`/`t.audio()` fields say what is wrong. Expected values are written by hand.
 */
import { describe, expect, test } from "@jest/globals";
import { Audio, Document, Image, t, ValidationError } from "typelm";
import { thrownBy } from "../helpers/thrown.js";

/** The 8-byte PNG signature: enough for the sniffer to call it image/png. */
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `fn()`'s error, which must be a ValidationError of the code under test. */
const validationError = (fn: () => unknown): ValidationError => thrownBy(ValidationError, fn);

describe("media values through the bundle", () => {
  test("the factories make values of their class, typed from the bytes", () => {
    const image = Image.fromBytes(PNG);
    expect(image).toBeInstanceOf(Image);
    expect([image.mediaType, image.size, image.base64]).toEqual(["image/png", 8, "iVBORw0KGgo="]);
    const decoded = Image.fromBase64("data:image/png;base64,iVBORw0K Ggo=");
    expect([decoded.mediaType, decoded.size, Array.from(decoded.bytes!)]).toEqual(["image/png", 8, Array.from(PNG)]);
    const url = Document.fromUrl("https://example.com/a.pdf", "application/pdf");
    expect(url.toJSON()).toEqual({ kind: "document", mediaType: "application/pdf", url: "https://example.com/a.pdf" });
    expect(Audio.fromBytes(Buffer.from("hello"), "audio/wav").mediaType).toBe("audio/wav");
  });

  test("their checks throw the package's ValidationError with their messages", async () => {
    expect(validationError(() => Image.fromUrl("ftp://example.com/a.png")).message)
      .toBe('A media URL must start with https:, http: or data:; received "ftp://example.com/a.png"');
    expect(validationError(() => Image.fromBytes("abc" as never)).message).toBe("fromBytes expects a Uint8Array (or Buffer); received string");
    expect(validationError(() => Image.fromBase64("not base64!")).message)
      .toBe('fromBase64 expects base64 text (A–Z, a–z, 0–9, +, / and = padding); received "not base64!"');
    expect(validationError(() => Audio.fromUrl("https://example.com/a.wav").base64).message)
      .toBe("This audio clip is a URL (https://example.com/a.wav); it has no bytes to encode");
    const missing = await Image.fromFile("/no/such/typelm-file.png").then(() => undefined, (error: unknown) => error);
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as Error).message).toMatch(/^Cannot read the media file \/no\/such\/typelm-file\.png: .*ENOENT/);
  });

  test("media fields say what is wrong with a value", () => {
    const messages = (result: { success: boolean; error?: { issues: { message: string }[] } }) => result.error?.issues.map((i) => i.message);
    expect(t.image().safeParse(Image.fromBytes(PNG)).success).toBe(true);
    expect(messages(t.image().safeParse(Document.fromBytes(PNG)))).toEqual(["it is a Document; make one with Image.fromFile, fromBytes, fromBase64 or fromUrl"]);
    expect(messages(t.image().safeParse("a.png"))).toEqual(["it is not an Image; make one with Image.fromFile, fromBytes, fromBase64 or fromUrl"]);
    expect(messages(t.image().safeParse(Image.fromBytes(Buffer.from("hello"))))).toEqual(["its 5 bytes are in no known format"]);
    expect(messages(t.audio().safeParse(Audio.fromBytes(PNG)))).toEqual(["its bytes are image/png"]);
    expect(t.image().safeParse(Image.fromUrl("https://example.com/a.png")).success).toBe(true);
  });
});
