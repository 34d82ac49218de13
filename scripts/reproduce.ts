// The lab's reproduction on a bundled dataset: poem-sentiment test split through a typelm Predict.
// Model: TYPELM_LM (e.g. "ollama/llama3.2", "openai/gpt-4o-mini") when set; otherwise an offline
// baseline (naive Bayes trained on the train split) answering through ScriptedLM, so the whole
// pipeline — prompt, reply extraction, conversion — runs with no network.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { z } from "zod";
import pLimit from "p-limit";
import { Predict, Signature, type LanguageModel } from "../lib/index.js";
import { ScriptedLM } from "../lib/testing/index.js";
import { accuracy, macroF1, perLabel } from "../lib/evaluate/metrics.js";
import { NaiveBayes } from "./naive-bayes.js";

const LABELS = ["negative", "no_impact", "positive", "mixed"] as const;

class PoemSentiment extends Signature {
  static override description =
    "Classify the sentiment a verse of poetry expresses: negative, positive, mixed, or no_impact when it expresses none.";
  static override input = { verse: z.string().describe("one line of a poem") };
  static override output = { sentiment: z.enum(LABELS) };
}

interface Row { id: string; verse: string; label: string }

function load(split: string): Row[] {
  return readFileSync(`datasets/poem-sentiment/${split}.jsonl`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Row);
}

async function model(train: Row[]): Promise<{ lm: LanguageModel; description: string }> {
  const id = process.env["TYPELM_LM"];
  if (id) {
    const { LM } = await import("../lib/lm/lm.js");
    return { lm: new LM(id, { temperature: 0 }), description: `${id} (temperature 0)` };
  }
  const nb = new NaiveBayes();
  for (const r of train) nb.train(r.verse, r.label);
  const lm = new ScriptedLM((req) => ({ sentiment: nb.predict(String(req.inputs?.["verse"] ?? "")) }), { model: "naive-bayes" });
  return { lm, description: "offline baseline: multinomial naive Bayes trained on the train split (no language model; set TYPELM_LM to use one)" };
}

async function main(): Promise<void> {
  const train = load("train");
  const test = load("test");
  const { lm, description } = await model(train);
  const predict = new Predict(PoemSentiment);
  const limit = pLimit(Number(process.env["TYPELM_CONCURRENCY"] ?? 4));
  let done = 0;
  const started = Date.now();
  const results = await Promise.all(test.map((row) => limit(async () => {
    let predicted = "";
    let error: string | null = null;
    try {
      predicted = (await predict.call({ verse: row.verse }, { lm })).sentiment;
    } catch (e) {
      error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    }
    done++;
    if (done % 20 === 0 || done === test.length) process.stderr.write(`\r${done}/${test.length} examples`);
    return { id: row.id, verse: row.verse, gold: row.label, predicted, correct: predicted === row.label, error };
  })));
  process.stderr.write("\n");
  const gold = results.map((r) => r.gold);
  const pred = results.map((r) => r.predicted);
  const acc = accuracy(gold, pred);
  const f1 = macroF1(gold, pred);
  const labels = [...new Set(gold)].sort();
  const out = "reports/poem-sentiment";
  mkdirSync(out, { recursive: true });
  const summary = { dataset: "poem-sentiment", split: "test", examples: test.length, model: description, accuracy: acc, f1_score: f1,
    errors: results.filter((r) => r.error).length, seconds: (Date.now() - started) / 1000, generatedAt: new Date().toISOString() };
  writeFileSync(`${out}/results.json`, JSON.stringify({ summary, results }, null, 2) + "\n");
  const table = labels.map((l) => {
    const s = perLabel(gold, pred, l);
    return `| ${l} | ${s.support} | ${s.precision.toFixed(3)} | ${s.recall.toFixed(3)} | ${s.f1.toFixed(3)} |`;
  });
  writeFileSync(`${out}/report.md`, `# poem-sentiment, test split

- Model: ${description}
- Predictor: \`Predict(PoemSentiment)\` (Enhanced Prompting, JSON)
- Examples: ${test.length}; failed calls: ${summary.errors}
- **Accuracy: ${acc.toFixed(3)}**, **macro-F1: ${f1.toFixed(3)}**

| label | support | precision | recall | F1 |
|---|---|---|---|---|
${table.join("\n")}

Per-example results: \`results.json\`. Reproduce: \`npm run reproduce\` (set \`TYPELM_LM\` to use a language model).
`);
  process.stdout.write(`poem-sentiment test: accuracy ${acc.toFixed(3)}, macro-F1 ${f1.toFixed(3)} (${description})\nwrote ${out}/report.md and ${out}/results.json\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`reproduce failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
