// One writer process of pg-writers.test.ts, on the built package (dist/): it says "ready" on stdout,
// waits for "go" on stdin (so every writer starts at once), does its part and prints a JSON line.
//   node pg-writer-child.mjs registry <url> <name> <count>   stores <count> versions of <name> at once
//   node pg-writer-child.mjs rows <url> <writer> <runs> <rows> records <rows> examples in each of <runs> runs
//   node pg-writer-child.mjs cache <url> <baseURL>           evaluates five words with cache: true
import { createInterface } from "node:readline";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, LM, Predict, Registry, Signature, configure } from "../../dist/pkg/index.js";

const [mode, url, ...args] = process.argv.slice(2);

async function go() {
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) if (line.trim() === "go") break;
  lines.close();
}

async function registry(name, count) {
  const Classify = Signature.define({
    name: "Classify", description: "Classify the sentiment.", input: { sentence: z.string() }, output: { sentiment: z.enum(["negative", "positive"]) },
  });
  const registry = new Registry({ path: url });
  await go();
  const stored = await Promise.all(Array.from({ length: count }, (_, i) => registry.store({
    moduleInstance: new Predict(Classify, { instruction: `process ${process.pid} version ${i}` }), name, metadata: { pid: process.pid, i },
  })));
  return stored.map((v) => v.version);
}

async function rows(writer, runs, count) {
  const lab = LabStore.open({ url });
  await lab.runs(); // connected and migrated before the start
  await go();
  const ids = Array.from({ length: runs }, () => lab.startRun({ kind: "evaluation", name: `writer ${writer}`, config: { writer } }));
  for (let i = 0; i < count; i++) {
    for (const id of ids) {
      lab.recordExample(id, {
        index: i, exampleId: `w${writer}-${i}`, inputs: { text: `writer ${writer} example ${i}` }, expected: { label: "a" },
        prediction: { label: i % 3 === 0 ? "b" : "a" }, scores: { accuracy: i % 3 === 0 ? 0 : 1 }, error: null,
        durationMs: 1, inputTokens: 10, outputTokens: 2, cost: 0.0001,
      });
    }
    // As an evaluation does: a few examples finish per turn of the event loop.
    if (i % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
  }
  for (const id of ids) lab.finishRun(id, { status: "completed", score: 2 / 3 });
  await lab.flush();
  return ids;
}

async function cache(baseURL) {
  const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
  configure((c) => { c.lab = { url }; c.cache = true; });
  const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-cache-test-key", baseURL, temperature: 0 });
  const examples = ["ant", "bee", "cat", "dog", "eel"].map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase() } }));
  await go();
  const report = await new Evaluation({ progress: false, concurrency: 2 }).evaluate({
    moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm; }), testExamples: examples,
  });
  return { accuracy: report.metrics.accuracy, predictions: report.results.map((r) => r.prediction), runId: report.runId };
}

const result = mode === "registry" ? await registry(args[0], Number(args[1]))
  : mode === "rows" ? await rows(Number(args[0]), Number(args[1]), Number(args[2]))
  : mode === "cache" ? await cache(args[0])
  : (() => { throw new Error(`unknown mode ${mode}`); })();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
