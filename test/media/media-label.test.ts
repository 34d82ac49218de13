import { describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { Resvg } from "@resvg/resvg-js";
import { FewShotExample, Image } from "../../lib/index.js";
import { jsonWithMediaLabels, mediaLabel } from "../../lib/media/label.js";
import { isMediaRef, mediaFromRefs, mediaToRefs } from "../../lib/media/refs.js";
import { configKey } from "../../lib/optimize/candidates.js";

const png = (colour: string) =>
  Buffer.from(new Resvg(`<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="${colour}"/></svg>`).render().asPng());

describe("media values in optimizer text and keys", () => {
  it("labels a picture by kind, type, size and the first 12 hex digits of its sha256", () => {
    const bytes = png("red");
    const sha = createHash("sha256").update(bytes).digest("hex");
    const size = bytes.length < 1000 ? `${bytes.length} B` : `${(bytes.length / 1000).toFixed(1)} kB`;
    expect(mediaLabel(Image.fromBytes(bytes))).toBe(`[image image/png ${size} sha256:${sha.slice(0, 12)}…]`);
    expect(mediaLabel(Image.fromBytes(new Uint8Array([...bytes, ...new Uint8Array(12_300 - bytes.length)])))).toMatch(/^\[image image\/png 12\.3 kB sha256:[0-9a-f]{12}…\]$/);
    expect(mediaLabel(Image.fromUrl("https://example.com/a.png"))).toBe("[image https://example.com/a.png]");
    const text = jsonWithMediaLabels({ image: Image.fromBytes(bytes), list: [Image.fromBytes(bytes)], n: 3 });
    expect(text).toBe(JSON.stringify({ image: `[image image/png ${size} sha256:${sha.slice(0, 12)}…]`, list: [`[image image/png ${size} sha256:${sha.slice(0, 12)}…]`], n: 3 }));
    expect(text).not.toContain(bytes.toString("base64").slice(0, 20));
  });

  it("gives demos without ids that differ only in their picture different configuration keys, by sha256 and without base64", () => {
    const [red, blue] = [png("red"), png("blue")];
    const demo = (bytes: Buffer) => new FewShotExample({ input: { image: Image.fromBytes(bytes) }, output: { count: 1 } });
    const candidates = { instructions: { self: ["Count."] }, demoSets: { self: [[demo(red)], [demo(blue)], [demo(red)]] } };
    const key = (demos: number) => configKey(candidates, { self: { instruction: 0, demos } });
    expect(key(0)).not.toBe(key(1));
    expect(key(0)).toBe(key(2));
    expect(key(0)).toContain(createHash("sha256").update(red).digest("hex"));
    expect(key(0)).not.toContain(red.toString("base64").slice(0, 20));
  });

  it("writes a reference and reads back an Image of the same bytes; a missing or altered copy is refused", () => {
    const red = png("red");
    const seen = new Map();
    const ref = mediaToRefs({ input: { image: Image.fromBytes(red) } }, seen) as { input: { image: unknown } };
    expect(isMediaRef(ref.input.image)).toBe(true);
    expect(JSON.stringify(ref)).not.toContain(red.toString("base64").slice(0, 20));
    const back = mediaFromRefs(ref, (sha) => seen.get(sha)?.bytes, "demo") as { input: { image: Image } };
    expect(back.input.image).toBeInstanceOf(Image);
    expect(Buffer.from(back.input.image.bytes!).equals(red)).toBe(true);
    expect(() => mediaFromRefs(ref, () => undefined, "demo 1")).toThrow(/demo 1: the image with sha256 [0-9a-f]{64} .* is not found/);
    expect(() => mediaFromRefs(ref, () => png("blue"), "demo 1")).toThrow(/another sha256/);
  });
});
