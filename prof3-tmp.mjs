import { JsonReader } from "/work/wt-spred/dist/lib/stream/json-reader.js";
const v = { label: "good", score: 0.5, answer: "the answer keeps going with plain words ".repeat(500) };
const chunks = JSON.stringify(v, null, 2).match(/[\s\S]{1,4}/g);
for (const snap of [false, true, false, true]) {
  const t = process.cpuUsage();
  for (let r = 0; r < 50; r++) { const rd = new JsonReader(() => {}); for (const c of chunks) { rd.push(c); if (snap) rd.snapshot(); } }
  const d = process.cpuUsage(t); console.log(snap, ((d.user + d.system) / 50 / chunks.length).toFixed(3));
}
