import { afterAll, afterEach, describe, expect, it, jest } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { z } from "zod";
import { Audio, Document, FewShotExample, Image, Predict, Signature, ValidationError, t } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { validateInputs } from "../../lib/convert/input.js";
import { compiled } from "../../lib/signature/compile.js";
import { shapeToJsonSchema } from "../../lib/signature/json-schema.js";
import { sniffMediaType } from "../../lib/media/sniff.js";
import { wavBytes } from "../store/media-fixture.js";

// Real bytes: a PNG rendered by resvg; the others are small files of each format written out whole.
const png = new Uint8Array(new Resvg('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="red"/></svg>').render().asPng());
const gif = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
const webp = Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");
const jpeg = Buffer.from("/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=", "base64");
const pdf = Buffer.from("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n");
// One MPEG-1 layer III frame (128 kbit/s, 44.1 kHz): header FF FB 90 00, then 413 bytes of silence.
const mp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(413)]);
const aac = Buffer.concat([Buffer.from([0xff, 0xf1, 0x50, 0x80]), Buffer.alloc(60)]); // ADTS AAC: layer bits 00, not MP3

const dir = mkdtempSync(join(tmpdir(), "typelm-media-"));
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("sniffing the media type from the bytes", () => {
  it("reads each supported format from real bytes", () => {
    expect([png, jpeg, gif, webp, wavBytes(), mp3, pdf].map((b) => sniffMediaType(b))).toEqual(
      ["image/png", "image/jpeg", "image/gif", "image/webp", "audio/wav", "audio/mpeg", "application/pdf"]);
    expect(sniffMediaType(Buffer.from("hello, world"))).toBeUndefined();
    expect(sniffMediaType(aac)).toBeUndefined();
    expect(sniffMediaType(new Uint8Array(0))).toBeUndefined();
  });

  it("a PNG file named .jpg is still a PNG", async () => {
    const file = join(dir, "photo.jpg");
    writeFileSync(file, png);
    const image = await Image.fromFile(file);
    expect(image.mediaType).toBe("image/png");
    // A declared type does not override what the bytes say.
    expect(Image.fromBytes(png, "image/jpeg").mediaType).toBe("image/png");
  });
});

describe("media values", () => {
  it("hold the bytes once, hash them, and never dump them in JSON", () => {
    const image = Image.fromBytes(png);
    expect(image.bytes).toBe(png);
    const sha = createHash("sha256").update(png).digest("hex");
    expect(image.sha256).toBe(sha);
    expect(JSON.parse(JSON.stringify({ photo: image }))).toEqual({ photo: { kind: "image", mediaType: "image/png", bytes: png.length, sha256: sha } });
    expect(JSON.stringify(image)).not.toContain(Buffer.from(png).toString("base64").slice(0, 12));
  });

  it("encodes base64 once per value, at first use", () => {
    const spy = jest.spyOn(Buffer.prototype, "toString");
    const image = Image.fromBytes(png);
    const base64Calls = () => spy.mock.calls.filter((c) => c[0] === "base64").length;
    expect(base64Calls()).toBe(0);
    const first = image.base64;
    const second = image.base64;
    expect(second).toBe(first);
    expect(base64Calls()).toBe(1);
    expect(Buffer.from(first, "base64").equals(Buffer.from(png))).toBe(true);
  });

  it("fromBase64 keeps the given text as its encoding and decodes the bytes", () => {
    const text = Buffer.from(png).toString("base64");
    const spy = jest.spyOn(Buffer.prototype, "toString");
    const image = Image.fromBase64(`data:image/png;base64,${text}`);
    expect(image.base64).toBe(text);
    expect(spy.mock.calls.filter((c) => c[0] === "base64")).toHaveLength(0);
    expect(image.mediaType).toBe("image/png");
    expect(() => Image.fromBase64("not base64!")).toThrow(ValidationError);
  });

  it("fromUrl holds the address only", () => {
    const image = Image.fromUrl("https://example.com/cat.png", "image/png");
    expect(image.toJSON()).toEqual({ kind: "image", mediaType: "image/png", url: "https://example.com/cat.png" });
    expect(() => Image.fromUrl("file:///etc/passwd")).toThrow(/https:, http: or data:/);
  });
});

class Describe extends Signature {
  static override description = "Answer the question about the pictures.";
  static override input = { photo: t.image(), more: z.array(t.image()).optional(), clip: t.audio().optional(), paper: t.document().optional(), question: z.string() };
  static override output = { answer: z.string() };
}

describe("media fields", () => {
  it("describe themselves in the input JSON Schema as base64 of their media types", () => {
    const schema = shapeToJsonSchema(Describe.input);
    const props = schema.properties as Record<string, unknown>;
    expect(props.photo).toEqual({ type: "string", contentEncoding: "base64", contentMediaType: "image/*" });
    expect(props.more).toEqual({ type: "array", items: { type: "string", contentEncoding: "base64", contentMediaType: "image/*" } });
    expect(props.clip).toEqual({ type: "string", contentEncoding: "base64", contentMediaType: "audio/*" });
    expect(props.paper).toEqual({ type: "string", contentEncoding: "base64", contentMediaType: "application/pdf" });
    expect(schema.required).toEqual(["photo", "question"]);
  });

  it("accept values of their kind, in arrays too", () => {
    const values = validateInputs(compiled(Describe), {
      photo: Image.fromBytes(jpeg), more: [Image.fromBytes(gif), Image.fromBytes(webp)], clip: Audio.fromBytes(wavBytes()), paper: Document.fromBytes(pdf), question: "?",
    });
    expect((values.photo as Image).mediaType).toBe("image/jpeg");
    expect((values.more as Image[]).map((i) => i.mediaType)).toEqual(["image/gif", "image/webp"]);
    expect(Audio.fromBytes(mp3).mediaType).toBe("audio/mpeg");
  });

  const refusal = (inputs: Record<string, unknown>): ValidationError => {
    try {
      validateInputs(compiled(Describe), { question: "?", ...inputs });
    } catch (error) {
      if (error instanceof ValidationError) return error;
      throw error;
    }
    throw new Error("no ValidationError");
  };

  it("refuse a value of another kind, naming the field", () => {
    const e = refusal({ photo: Document.fromBytes(pdf) });
    expect(e.field).toBe("photo");
    expect(e.message).toMatch(/^Input field "photo" of Describe: expected an image \(PNG, JPEG, GIF or WEBP\), received \{"kind":"document"/);
    expect(e.message).toContain("it is a Document");
    expect(refusal({ photo: "cat.png" }).message).toContain("make one with Image.fromFile");
  });

  it("refuse bytes in no supported format of the kind, naming the field (and the array index)", () => {
    const e = refusal({ photo: Image.fromBytes(Buffer.from("plain text, not a picture"), "image/png") });
    expect(e.field).toBe("photo");
    expect(e.message).toContain("in no known format");
    const inArray = refusal({ photo: Image.fromBytes(png), more: [Image.fromBytes(png), Image.fromBytes(pdf)] });
    expect(inArray.field).toBe("more[1]");
    expect(inArray.message).toContain("its bytes are application/pdf");
    expect(refusal({ photo: Image.fromBytes(png), clip: Audio.fromBytes(aac) }).field).toBe("clip");
  });

  it("refuse before any model call", async () => {
    const lm = new ScriptedLM([{ answer: "a cat" }]);
    const predict = new Predict(Describe);
    await expect(predict.call({ photo: Image.fromBytes(pdf), question: "What animal?" }, { lm })).rejects.toThrow(ValidationError);
    expect(lm.requests).toHaveLength(0);
    // The same predictor with a PNG reaches the model.
    await predict.call({ photo: Image.fromBytes(png), question: "What animal?" }, { lm });
    expect(lm.requests).toHaveLength(1);
  });

  it("may hold media in demos", () => {
    const demo = new FewShotExample({ input: { photo: Image.fromBytes(png), question: "?" }, output: { answer: "red" } });
    expect((demo.input.photo as Image).sha256).toHaveLength(64);
  });
});
