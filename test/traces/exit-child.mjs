// A process of exit.test.ts, on the built package (dist/): records <count> traces into the lab at
// <lab> (a file path or a postgres:// URL) and ends without flushing: the traces still in memory
// must be written as the process exits.
import { z } from "zod";
import { configure, Predict, Signature } from "../../dist/pkg/index.js";
import { ScriptedLM } from "../../dist/pkg/testing.js";

const [lab, count] = process.argv.slice(2);
const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
configure((c) => {
  c.lab = lab.startsWith("postgres") ? { url: lab } : { path: lab };
  c.traces = { sample: 1 };
  c.lm = new ScriptedLM((req) => ({ loud: String(req.inputs?.word ?? "").toUpperCase() }));
});
const program = new Predict(Upper);
const ids = [];
for (let i = 0; i < Number(count); i++) ids.push((await program.call({ word: `w${i}` })).traceId);
process.stdout.write(`${JSON.stringify(ids)}\n`);
