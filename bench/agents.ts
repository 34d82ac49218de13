/**
 * bench/agents.ts: what a ReAct evaluation costs with prompt caching off and on, and with native
 * versus text tool calling, against the fake provider (Anthropic wire, through @anthropic-ai/sdk),
 * in one run, with no network.
 *
 * The task: 100 questions, each naming 5 keys; the answer is the sum of the 5 values the `lookup`
 * tool returns, so every example takes 5 tool steps. The "model" is the fake provider's scripted
 * reply function, which reads what the request carries (the tool results, or the text trajectory's
 * observations) and asks for the next lookup, or answers with the sum of what it has read: it is
 * a scripted model, so every example is solved in every setting, and the figures compare what the
 * protocols and the cache cost, not how well a model reasons.
 *
 * Settings: text protocol (a step call per tool call, a "finish" step, then the extraction call);
 * native with one call per turn (5 tool turns, then a `finish` call); native with the 5 lookups in
 * one turn (run at once), then `finish`. Each with `promptCache` off and on. The fake provider's
 * prompt cache is honest to Anthropic's: a request reads the longest of its prefixes that an
 * earlier request marked with `cache_control` (fake-prompt-cache.ts). Prices:
 * claude-haiku-4-5's list price in typelm's table (input $1, output $5, cache read $0.10, cache write $1.25 per
 * million tokens). Tokens are the fake's estimate (4 characters a token).
 *
 * Run: `npm run bench:agents`.
 */
import pLimit from "p-limit";
import { z } from "zod";
import { LM } from "../lib/lm/lm.js";
import { trackUsage, type ModelCall, type UsageTotals } from "../lib/lm/usage-scope.js";

import { ReAct } from "../lib/predict/react.js";
import { Signature } from "../lib/signature/signature.js";
import { startFakeProvider, type FakeRequest } from "../lib/testing/fake-provider.js";
import { toolCalls } from "../lib/testing/fake-tools.js";
import { tool } from "../lib/tools/tool.js";
import { intFromEnv } from "./env.js";

const EXAMPLES = intFromEnv("BENCH_AGENT_EXAMPLES", 100);
const STEPS = 5;
const MODEL = "anthropic/claude-haiku-4-5";

const SumKeys = Signature.define({
  name: "SumKeys",
  description: "Look up the value of each key named in the question with the lookup tool, and give the sum of the values.",
  input: { question: z.string() },
  output: { answer: z.string().describe("One sentence stating the sum"), total: z.number().describe("The sum of the values") },
});

/** The value behind a key: a fixed function the bench knows independently of the tool. */
const valueOf = (key: string): number => [...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 97, 7);

const lookup = tool({
  name: "lookup", description: "The value stored under a key.", input: { key: z.string() },
  call: async ({ key }) => valueOf(key),
});

const questions = Array.from({ length: EXAMPLES }, (_, i) => Array.from({ length: STEPS }, (_, k) => `key-${i}-${k}`));
const questionText = (keys: string[]): string => `What is the sum of the values of ${keys.join(", ")}?`;

type Mode = "text" | "native" | "native-parallel";

/** The scripted model: reads the request, asks for the next lookup(s) or answers with the sum. */
function scriptedModel(mode: Mode) {
  return (req: FakeRequest) => {
    const system = req.messages[0]?.content ?? "";
    const userText = req.messages.filter((m) => m.role === "user").map((m) => m.content).join("\n");
    const keys = [...new Set(userText.match(/key-\d+-\d+/g) ?? [])].slice(0, STEPS);
    if (mode === "text") {
      const observations = [...userText.matchAll(/Observation: (\d+)/g)].map((m) => Number(m[1]));
      if (system.includes("availableTools")) {
        return observations.length < STEPS
          ? { thought: "I look up the next key.", action: "lookup", toolInput: { key: keys[observations.length] } }
          : { thought: "I have every value.", action: "finish", toolInput: {} };
      }
      const total = observations.reduce((a, b) => a + b, 0);
      return { answer: `The sum is ${total}.`, total };
    }
    const results = req.toolResults.map((r) => Number(r.content));
    // Call ids of one length in every setting, so the token counts compare.
    const id = (k: number): string => `toolu_${keys[0]!.replace(/\D+/g, "_")}_${k}`;
    if (mode === "native-parallel" && results.length === 0) return toolCalls(keys.map((key, k) => ({ id: id(k), name: "lookup", arguments: { key } })));
    if (results.length < STEPS) return toolCalls([{ id: id(results.length), name: "lookup", arguments: { key: keys[results.length]! } }], { text: "I look up the next key." });
    const total = results.reduce((a, b) => a + b, 0);
    return toolCalls([{ id: id(9), name: "finish", arguments: { answer: `The sum is ${total}.`, total } }]);
  };
}

interface Row {
  mode: Mode;
  promptCache: boolean;
  solved: number;
  usage: UsageTotals;
  /** Calls after each example's first, and how many of them read from the prompt cache. */
  later: number;
  laterRead: number;
  /** Of the input tokens of calls after each example's first, the share read from the cache. */
  laterReadTokens: number;
}

async function run(mode: Mode, promptCache: boolean): Promise<Row> {
  const fake = await startFakeProvider({ promptCache: true, defaultReply: scriptedModel(mode) });
  try {
    const lm = new LM(MODEL, { apiKey: "sk-bench-not-a-key", baseURL: fake.url, promptCache });
    const agent = new ReAct(SumKeys, { tools: [lookup], toolCalling: mode === "text" ? "text" : "native", maxIterations: 8 });
    const limit = pLimit(8);
    let solved = 0;
    let later = 0;
    let laterRead = 0;
    let laterInput = 0;
    let laterReadTokens = 0;
    const totals = emptyTotals();
    await Promise.all(questions.map((keys) => limit(async () => {
      const scope = { ...emptyTotals(), log: [] as ModelCall[] };
      const result = await trackUsage(scope, () => agent.call({ question: questionText(keys) }, { lm }));
      if (result.total === keys.reduce((a, k) => a + valueOf(k), 0)) solved++;
      add(totals, scope);
      scope.log.slice(1).forEach((c) => {
        later++;
        if ((c.cacheReadTokens ?? 0) > 0) laterRead++;
        laterInput += c.inputTokens;
        laterReadTokens += c.cacheReadTokens ?? 0;
      });
    })));
    return { mode, promptCache, solved, usage: totals, later, laterRead, laterReadTokens: laterInput === 0 ? 0 : laterReadTokens / laterInput };
  } finally {
    await fake.close();
  }
}

function emptyTotals(): UsageTotals {
  return { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0, cacheSavings: 0 };
}

function add(into: UsageTotals, from: UsageTotals): void {
  for (const k of ["calls", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "cost", "cacheSavings"] as const) into[k] += from[k];
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const mode of ["text", "native", "native-parallel"] as Mode[]) {
    for (const promptCache of [false, true]) rows.push(await run(mode, promptCache));
  }
  console.log(`ReAct evaluation: ${EXAMPLES} examples x ${STEPS} tool steps, ${MODEL} prices, fake provider (Anthropic wire)\n`);
  console.log("| tool calling | promptCache | solved | requests | input tokens | of which cache read | cache write | output tokens | cost (USD) | requests / solved | tokens / solved | cost / solved (USD) | later calls reading the cache | later input read from cache |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const u = r.usage;
    const per = (n: number): string => (r.solved === 0 ? "-" : (n / r.solved).toFixed(n / r.solved < 1 ? 5 : 1));
    console.log(`| ${r.mode} | ${r.promptCache ? "on" : "off"} | ${r.solved}/${EXAMPLES} | ${u.calls} | ${u.inputTokens} | ${u.cacheReadTokens} | ${u.cacheWriteTokens} | ${u.outputTokens} | ${u.cost.toFixed(4)} | ${per(u.calls)} | ${per(u.inputTokens + u.outputTokens)} | ${per(u.cost)} | ${r.laterRead}/${r.later} | ${(r.laterReadTokens * 100).toFixed(0)}% |`);
  }
  for (const mode of ["text", "native", "native-parallel"] as Mode[]) {
    const off = rows.find((r) => r.mode === mode && !r.promptCache)!;
    const on = rows.find((r) => r.mode === mode && r.promptCache)!;
    console.log(`${mode}: promptCache on costs ${(on.usage.cost / off.usage.cost * 100).toFixed(1)}% of off ($${on.usage.cost.toFixed(4)} vs $${off.usage.cost.toFixed(4)}); cache saved $${on.usage.cacheSavings.toFixed(4)}`);
  }
}

await main();
