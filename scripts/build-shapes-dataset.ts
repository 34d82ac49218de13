// Builds datasets/shapes/ (`npm run build:shapes`): 300 PNG pictures of coloured shapes drawn by
// scripts/shapes.ts, data.jsonl (id, image as {"file": …}, count), signature.json, README.md (ending with scripts/shapes-task.md: the task in typelm) and
// ATTRIBUTION.md. Deterministic: a rebuild writes byte-identical files, which are committed.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SHAPES_SEED, SIZE, imageName, pngOf, rowOf, shapesOf } from "./shapes.js";

const COUNT = 300;
const out = join(fileURLToPath(new URL("../..", import.meta.url)), "datasets", "shapes");
rmSync(join(out, "images"), { recursive: true, force: true });
mkdirSync(join(out, "images"), { recursive: true });

const lines: string[] = [];
const counts = new Map<number, number>();
let bytes = 0;
for (let i = 0; i < COUNT; i++) {
  const shapes = shapesOf(i);
  const png = pngOf(shapes);
  bytes += png.length;
  writeFileSync(join(out, imageName(i)), png);
  lines.push(rowOf(i, shapes));
  counts.set(shapes.length, (counts.get(shapes.length) ?? 0) + 1);
}
const data = lines.join("\n") + "\n";
writeFileSync(join(out, "data.jsonl"), data);
writeFileSync(join(out, "signature.json"), JSON.stringify({
  name: "CountShapes",
  description: "Count the shapes (circles, squares and triangles) in the picture.",
  input: { image: { type: "image", description: `A ${SIZE}×${SIZE} picture of coloured shapes on white` } },
  output: { count: { type: "integer", description: "How many shapes the picture holds" } },
}, null, 2) + "\n");
const sha = createHash("sha256").update(data).digest("hex");
const histogram = [...counts].sort((a, b) => a[0] - b[0]).map(([n, rows]) => `| ${n} | ${rows} |`).join("\n");
writeFileSync(join(out, "ATTRIBUTION.md"), `# shapes

- Source: typelm's own, drawn by \`scripts/build-shapes-dataset.ts\` (no outside data).
- Licence: CC0 1.0 (public domain dedication; see README.md).
`);
writeFileSync(join(out, "README.md"), `# shapes: count the coloured shapes

${COUNT} pictures (${SIZE}×${SIZE} PNG) of 1 to 7 circles, squares and triangles in five colours on white, none
overlapping, and the task of counting them: \`CountShapes\` (signature.json), input \`image\` (\`t.image()\`),
output \`count\` (integer). \`loadDataset("shapes")\` splits data.jsonl 60/20/20 by a seeded hash of each id.

Made by typelm itself: every picture is drawn from SVG with \`@resvg/resvg-js\` by
\`scripts/build-shapes-dataset.ts\` (\`npm run build:shapes\`), from a seeded random stream per picture
(lib/random.ts, seed ${SHAPES_SEED}), so a rebuild writes byte-identical files.

## Licence

CC0 1.0 Universal: the pictures and labels are dedicated to the public domain; use them for anything.

## Files

- \`data.jsonl\`: ${COUNT} rows \`{"id": "001", "image": {"file": "images/001.png"}, "count": 3}\`; sha256 \`${sha}\`.
- \`images/NNN.png\`: ${bytes.toLocaleString("en")} bytes in all.

| shapes | pictures |
|---|---|
${histogram}

${readFileSync(join(out, "../../scripts/shapes-task.md"), "utf8").trimEnd()}
`);
process.stdout.write(`datasets/shapes: ${COUNT} pictures, ${bytes} bytes of PNG, data.jsonl sha256 ${sha}\n`);
