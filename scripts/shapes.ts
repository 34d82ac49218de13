// The pictures of the bundled `shapes` dataset: coloured circles, squares and triangles on a white
// 96×96 canvas, drawn as SVG and rendered to PNG with @resvg/resvg-js. Each picture depends only on
// (SEED, its index) through lib/random.ts, so a rebuild gives byte-identical files; the task is to
// count the shapes. Used by scripts/build-shapes-dataset.ts and by its determinism test.
import { createRequire } from "node:module";
import { Random } from "../lib/random.js";

/** The seed of every picture's random stream. */
export const SHAPES_SEED = 36;
/** Width and height of a picture, in pixels. */
export const SIZE = 96;
const COLOURS = { red: "#d62728", blue: "#1f77b4", green: "#2ca02c", orange: "#ff7f0e", purple: "#9467bd" } as const;
const KINDS = ["circle", "square", "triangle"] as const;

/** One shape of a picture: its kind, colour name, centre and radius (half the side of a square). */
export interface Shape {
  kind: (typeof KINDS)[number];
  colour: keyof typeof COLOURS;
  x: number;
  y: number;
  r: number;
}

/** The shapes of picture `index`: 1 to 7 of them, none overlapping (their bounding circles 3 px apart). */
export function shapesOf(index: number): Shape[] {
  const random = new Random(SHAPES_SEED, `shapes-${index}`);
  const count = 1 + random.int(7);
  const shapes: Shape[] = [];
  for (let tries = 0; shapes.length < count && tries < 10_000; tries++) {
    const r = 7 + random.int(8);
    const x = r + 2 + random.int(SIZE - 2 * r - 4);
    const y = r + 2 + random.int(SIZE - 2 * r - 4);
    const kind = random.pick(KINDS);
    const colour = random.pick(Object.keys(COLOURS) as (keyof typeof COLOURS)[]);
    // A square's corner reaches r·√2 from its centre.
    const reach = (s: { kind: string; r: number }) => (s.kind === "square" ? s.r * Math.SQRT2 : s.r);
    if (shapes.every((s) => Math.hypot(s.x - x, s.y - y) > reach(s) + reach({ kind, r }) + 3)) shapes.push({ kind, colour, x, y, r });
  }
  return shapes;
}

/** The SVG text of a picture. */
export function svgOf(shapes: readonly Shape[]): string {
  const body = shapes.map((s) => {
    const fill = COLOURS[s.colour];
    if (s.kind === "circle") return `<circle cx="${s.x}" cy="${s.y}" r="${s.r}" fill="${fill}"/>`;
    if (s.kind === "square") return `<rect x="${s.x - s.r}" y="${s.y - s.r}" width="${2 * s.r}" height="${2 * s.r}" fill="${fill}"/>`;
    const h = s.r * Math.sqrt(3) / 2;
    return `<polygon points="${s.x},${s.y - s.r} ${(s.x - h).toFixed(2)},${s.y + s.r / 2} ${(s.x + h).toFixed(2)},${s.y + s.r / 2}" fill="${fill}"/>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}"><rect width="${SIZE}" height="${SIZE}" fill="#ffffff"/>${body.join("")}</svg>`;
}

/** The PNG bytes of a picture (no fonts loaded: the pictures hold no text). */
export function pngOf(shapes: readonly Shape[]): Buffer {
  const { Resvg } = createRequire(import.meta.url)("@resvg/resvg-js") as typeof import("@resvg/resvg-js");
  return new Resvg(svgOf(shapes), { font: { loadSystemFonts: false } }).render().asPng();
}

/** The file name of picture `index` (from 0): images/001.png for the first. */
export function imageName(index: number): string {
  return `images/${String(index + 1).padStart(3, "0")}.png`;
}

/** The data.jsonl line of picture `index`. */
export function rowOf(index: number, shapes: readonly Shape[]): string {
  return JSON.stringify({ id: String(index + 1).padStart(3, "0"), image: { file: imageName(index) }, count: shapes.length });
}
