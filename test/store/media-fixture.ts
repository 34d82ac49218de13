// Media for the store and viewer suites: two pictures of the bundled shapes dataset (real PNGs), a
// short WAV clip and a one-page PDF written out whole, and rows and calls that hold them.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Audio, Document, Image } from "../../lib/media/media.js";
import type { ModelCall } from "../../lib/lm/usage-scope.js";
import type { EvaluationRow } from "../../lib/store/records.js";

const SHAPES = join(dirname(fileURLToPath(import.meta.url)), "../../datasets/shapes/images");

/** The bytes of one picture of the shapes dataset (`001.png` …). */
export function shapePng(n: number): Buffer {
  return readFileSync(join(SHAPES, `${String(n).padStart(3, "0")}.png`));
}

/** 0.1 s of 8 kHz 8-bit mono silence as a WAV file. */
export function wavBytes(): Buffer {
  const samples = Buffer.alloc(800, 0x80);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0); header.writeUInt32LE(36 + samples.length, 4); header.write("WAVE", 8);
  header.write("fmt ", 12); header.writeUInt32LE(16, 16); header.writeUInt16LE(1, 20); header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24); header.writeUInt32LE(8000, 28); header.writeUInt16LE(1, 32); header.writeUInt16LE(8, 34);
  header.write("data", 36); header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}

/** A PDF with one empty page. */
export const PDF_BYTES = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
    "3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
);

/** The sha256 of some bytes, computed here (not by the code under test). */
export { createHash } from "node:crypto";

/** A row whose inputs hold a picture, a list of two pictures, a clip and a document. */
export function mediaRow(index: number, picture = 1): EvaluationRow {
  return {
    index, exampleId: `m-${index}`,
    inputs: {
      image: Image.fromBytes(shapePng(picture)), more: [Image.fromBytes(shapePng(2)), Image.fromBytes(shapePng(3))],
      clip: Audio.fromBytes(wavBytes()), paper: Document.fromBytes(PDF_BYTES), question: "How many shapes?",
    },
    expected: { count: 7 }, prediction: { count: 7 }, scores: { accuracy: 1 }, error: null, durationMs: 5,
    inputTokens: 10, outputTokens: 2, cost: 0,
  };
}

/**
 * A call whose messages hold media in each form a recorder may meet: a data URL inside the text, an
 * `Image` value attached to a message, and a provider part carrying bare base64 (Anthropic's form).
 */
export function mediaCall(): ModelCall {
  const png = shapePng(4);
  const message = {
    role: "user" as const,
    content: `Count the shapes. data:image/png;base64,${png.toString("base64")} Answer with a number.`,
    media: [{ name: "image", value: Image.fromBytes(shapePng(5)) }],
    parts: [{ type: "image", source: { type: "base64", media_type: "image/png", data: shapePng(6).toString("base64") } }],
  };
  return {
    provider: "fake", model: "vision", messages: [{ role: "system", content: "You count shapes." }, message],
    reply: '{"count": 3}', inputTokens: 100, outputTokens: 4, cost: null, latencyMs: 12, cached: false,
  } as ModelCall;
}
