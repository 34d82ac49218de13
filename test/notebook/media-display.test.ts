// display.prediction with media: an image field inline (an <img> whose source is a data: URL of its
// bytes, escaped), a list of images, audio and documents as a line each (kind, type, size, hash), an
// image too large for the notebook file described instead, and a URL value's address escaped.
import { describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { Audio, Document, Image } from "../../lib/media/media.js";
import { Prediction } from "../../lib/predict/prediction.js";
import { display } from "../../lib/notebook/index.js";
import { PDF_BYTES, shapePng, wavBytes } from "../store/media-fixture.js";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("display.prediction with media", () => {
  it("shows an image inline as a data URL and a clip and a document as lines", () => {
    const png = shapePng(1);
    const bundle = display.prediction(new Prediction({
      picture: Image.fromBytes(png), pictures: [Image.fromBytes(shapePng(2)), Image.fromBytes(shapePng(3))],
      clip: Audio.fromBytes(wavBytes()), paper: Document.fromBytes(PDF_BYTES), count: 3,
    }))!;
    const html = String(bundle["text/html"]);
    expect(html).toContain(`<img src="data:image/png;base64,${png.toString("base64")}"`);
    expect(html).toContain(`<img src="data:image/png;base64,${shapePng(3).toString("base64")}"`);
    expect(html.match(/<img /g)).toHaveLength(3);
    const clip = `audio · audio/wav · ${wavBytes().length.toLocaleString("en-US")} bytes · sha256 ${sha(wavBytes()).slice(0, 16)}`;
    const paper = `document · application/pdf · ${PDF_BYTES.length} bytes · sha256 ${sha(PDF_BYTES).slice(0, 16)}`;
    expect(html).toContain(clip);
    expect(html).toContain(paper);
    const text = String(bundle["text/plain"]);
    expect(text).toContain(`image · image/png · ${png.length.toLocaleString("en-US")} bytes · sha256 ${sha(png).slice(0, 16)}`);
    expect(text).not.toContain(png.toString("base64").slice(0, 40));
  });

  it("describes an image too large for the notebook file, and escapes a URL value", () => {
    const big = Buffer.concat([shapePng(1), Buffer.alloc(1_000_001)]);
    const hostile = 'https://example.com/a.png?"><script>alert(1)</script>';
    const html = String(display.prediction(new Prediction({ big: Image.fromBytes(big), remote: Image.fromUrl(hostile) }))!["text/html"]);
    expect(html).not.toContain("<img");
    expect(html).toContain(`image · image/png · ${big.length.toLocaleString("en-US")} bytes · sha256 ${sha(big).slice(0, 16)}`);
    expect(html).not.toContain("<script>");
    expect(html).toContain("a.png?&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});
