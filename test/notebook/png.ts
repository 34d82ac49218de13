import { inflateSync } from "node:zlib";

/** A decoded 8-bit RGBA/RGB PNG (enough for resvg's and Chromium's output), written against zlib alone. */
export interface DecodedPng {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel, row-major. */
  rgba: Uint8Array;
}

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function decodePng(png: Uint8Array): DecodedPng {
  const bytes = Buffer.from(png);
  if (!PNG_SIGNATURE.every((b, i) => bytes[i] === b)) throw new Error("not a PNG: bad signature");
  let pos = 8;
  let width = 0, height = 0, channels = 0;
  const idat: Buffer[] = [];
  while (pos < bytes.length) {
    const length = bytes.readUInt32BE(pos);
    const type = bytes.toString("latin1", pos + 4, pos + 8);
    const body = bytes.subarray(pos + 8, pos + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const depth = body[8], colour = body[9], interlace = body[12];
      if (depth !== 8 || interlace !== 0) throw new Error(`unsupported PNG: depth ${depth}, interlace ${interlace}`);
      channels = colour === 6 ? 4 : colour === 2 ? 3 : 0;
      if (!channels) throw new Error(`unsupported PNG colour type ${colour}`);
    } else if (type === "IDAT") {
      idat.push(body);
    }
    pos += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = new Uint8Array(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      let add = 0;
      if (filter === 1) add = a;
      else if (filter === 2) add = b;
      else if (filter === 3) add = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[i] = (line[i]! + add) & 255;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o] = line[x * channels]!;
      out[o + 1] = line[x * channels + 1]!;
      out[o + 2] = line[x * channels + 2]!;
      out[o + 3] = channels === 4 ? line[x * channels + 3]! : 255;
    }
    prev = line;
  }
  return { width, height, rgba: out };
}

/** Pixels within `tolerance` (per channel) of the colour `#rrggbb`. */
export function countColour(image: DecodedPng, hex: string, tolerance = 6): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  let n = 0;
  for (let o = 0; o < image.rgba.length; o += 4) {
    if (Math.abs(image.rgba[o]! - r) <= tolerance && Math.abs(image.rgba[o + 1]! - g) <= tolerance && Math.abs(image.rgba[o + 2]! - b) <= tolerance) n++;
  }
  return n;
}

/** How many distinct colours the image uses (quantised to 5 bits a channel). */
export function distinctColours(image: DecodedPng): number {
  const seen = new Set<number>();
  for (let o = 0; o < image.rgba.length; o += 4) seen.add(((image.rgba[o]! >> 3) << 10) | ((image.rgba[o + 1]! >> 3) << 5) | (image.rgba[o + 2]! >> 3));
  return seen.size;
}
