import { z } from "zod";
import { BaseLM } from "/work/wt-spred/dist/lib/lm/base.js";
import { Predict, Signature } from "/work/wt-spred/dist/lib/index.js";
const Bench = Signature.define({ name: "Bench", description: "d", input: { question: z.string() }, output: { label: z.enum(["good","bad"]), score: z.number(), answer: z.string() } });
const v = { label: "good", score: 0.5, answer: "the answer keeps going with plain words ".repeat(500) };
const chunks = ("```json\n" + JSON.stringify(v, null, 2) + "\n```").match(/[\s\S]{1,4}/g);
async function* gen() { for (const c of chunks) yield c; }
class L extends BaseLM { provider="b"; model="m"; supportsStructuredOutputs(){return false}
  async complete(_r, o) { let content=""; for await (const p of gen()) { content+=p; o?.onDelta?.(p); } return { content, usage:{inputTokens:0,outputTokens:0}, provider:"b", model:"m", estimatedCost:0, cached:false }; } }
const lm = new L(); const p = new Predict(Bench); const inputs = { question: "q" };
const modes = {
  call: async () => { await p.call(inputs, { lm }); },
  resultOnly: async () => { await p.stream(inputs, { lm }).result; },
  iterate: async () => { const s = p.stream(inputs, { lm }); for await (const _ of s); await s.result; },
};
for (let round = 0; round < 3; round++) for (const [k, f] of Object.entries(modes)) {
  for (let i = 0; i < 5; i++) await f();
  const t = process.cpuUsage(); for (let i = 0; i < 20; i++) await f(); const d = process.cpuUsage(t);
  console.log(k, ((d.user + d.system) / 20 / chunks.length).toFixed(3), "µs/chunk");
}
