// What a run checks of its judges and says about them: a judge with no model, or the offline
// stand-in, is refused before any call; a judge's model is called once before the program is; a
// judge that gives every row one verdict is warned of in the report, the stored run and the terminal.
import { afterAll, afterEach, describe, expect, it, jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  ConfigurationError, configure, defineExperiment, Evaluation, FewShotExample, Instrumentation, Judge, LabStore, LM, Predict, Signature,
  resetConfiguration, type TypelmEvent,
} from "../../lib/index.js";
import { showRun } from "../../lib/lab/cli/show.js";
import type { LoadedExperiment } from "../../lib/lab/experiment/load.js";
import { runAndReport } from "../../lib/lab/experiment/reproduce.js";
import { runExperiment } from "../../lib/lab/experiment/run.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "typelm-judge-checks-")));
const stores: string[] = [];
afterAll(() => {
  for (const path of stores) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  resetConfiguration();
  LM.resetConfiguration();
  jest.restoreAllMocks();
});

const Capital = Signature.define({
  name: "Capital",
  description: "Name the capital of the country.",
  input: { country: z.string() },
  output: { answer: z.string() },
});
const ex = (n: number) => new FewShotExample({ id: `c-${n}`, input: { country: `country ${n}` }, output: { answer: `Capital ${n}` } });
const examples = [0, 1, 2, 3].map(ex);

/** A program with its own scripted model (right for even n, wrong for odd n), and that model. */
function program() {
  const lm = new ScriptedLM((req) => {
    const n = Number(/(\d+)/.exec(String(req.inputs?.["country"]))![1]);
    return { answer: n % 2 === 0 ? `Capital ${n}` : `Nowhere ${n}` };
  });
  return { module: new Predict(Capital).configure((c) => { c.lm = lm; }), lm };
}

/** A judge model that compares the answer with the reference, or always says `always`. */
function judgeLM(always?: "pass" | "fail") {
  return new ScriptedLM((req) => {
    const answer = (req.inputs?.["answer"] as { answer: string }).answer;
    const gold = (req.inputs?.["reference"] as { answer: string }).answer;
    return { rationale: `${answer} vs ${gold}`, verdict: always ?? (answer === gold ? "pass" : "fail") };
  });
}

function store(name: string): LabStore {
  const path = join(dir, `${name}.sqlite`);
  stores.push(path);
  return LabStore.open(path);
}

async function refusal(run: Promise<unknown>): Promise<ConfigurationError> {
  const error = await run.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigurationError);
  return error as ConfigurationError;
}

/** An experiment of the four examples, no optimizer, the program with its own model and `judge` as the metric. */
function experiment(name: string, judge: Judge, programModule: Predict): LoadedExperiment {
  const definition = defineExperiment({
    name, signature: Capital, dataset: { train: [ex(10)], dev: [ex(11)], test: examples },
    program: () => programModule, optimizer: "none", metrics: [judge],
  });
  return { definition, dir, file: join(dir, `${name}.ts`), sha256: "" } as unknown as LoadedExperiment;
}

const offline = { TYPELM_LM: "", OLLAMA_HOST: "http://127.0.0.1:9" };

describe("a judge's model is resolved before the run", () => {
  it("refuses a judge whose model is the offline stand-in, with a sentence, before any call or record", async () => {
    const lab = store("stand-in");
    const { module, lm } = program();
    configure((c) => { c.lm = new SimulatedLM({ model: "stand-in" }); });
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true });
    const error = await refusal(new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: module, testExamples: examples, metrics: [judge] }));
    expect(error.message).toMatch(/^Judge "correct" would be judged by the offline stand-in \(simulated\/stand-in\), which is not a language model and cannot judge/);
    expect(lm.requests).toHaveLength(0);
    expect(lab.runs()).toEqual([]);
  });

  it("typelm run offline: a judge with no model of its own would get the stand-in, and is refused before the program is called", async () => {
    const cwd = join(dir, "run-offline");
    mkdirSync(cwd, { recursive: true });
    stores.push(join(cwd, ".typelm/lab.sqlite"));
    const { module, lm } = program();
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true });
    const error = await refusal(runExperiment(experiment("offline", judge, module), { cwd, env: { ...process.env, ...offline }, ollamaProbeMs: 200 }));
    expect(error.message).toMatch(/^Judge "correct" would be judged by the offline stand-in/);
    expect(lm.requests).toHaveLength(0);
    expect(existsSync(join(cwd, ".typelm/lab.sqlite")) ? LabStore.open(join(cwd, ".typelm/lab.sqlite")).runs() : []).toEqual([]);
  });

  it("refuses a judge with no model at all, before any call", async () => {
    const lab = store("no-model");
    const { module, lm } = program();
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true });
    const error = await refusal(new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: module, testExamples: examples, metrics: [judge] }));
    expect(error.message).toMatch(/^Judge "correct" has no model: give it one/);
    expect(lm.requests).toHaveLength(0);
    expect(lab.runs()).toEqual([]);
  });
});

describe("a judge's model is checked before the program is called", () => {
  it("typelm run: a judge whose server cannot be reached stops the run before any call of the program", async () => {
    const cwd = join(dir, "run-unreachable");
    mkdirSync(cwd, { recursive: true });
    stores.push(join(cwd, ".typelm/lab.sqlite"));
    LM.configure((policy) => { policy.maxRetries = 0; });
    const { module, lm } = program();
    // Nothing listens on port 9: the connection is refused.
    const judge = new Judge({
      name: "correct", criteria: "Same city as the reference.", reference: true,
      lm: new LM("openai/judge-model", { baseURL: "http://127.0.0.1:9/v1", apiKey: "sk-judge-check-0000", cache: false }),
    });
    const error = await refusal(runExperiment(experiment("unreachable", judge, module), { cwd, env: { ...process.env, ...offline }, ollamaProbeMs: 200 }));
    expect(error.message).toMatch(/^Judge "correct": its model openai\/judge-model could not be used: openai request for model "judge-model" failed: connection to .* failed/);
    expect(error.message).not.toContain("sk-judge-check-0000");
    expect(lm.requests).toHaveLength(0);
    expect(existsSync(join(cwd, ".typelm/lab.sqlite")) ? LabStore.open(join(cwd, ".typelm/lab.sqlite")).runs() : []).toEqual([]);
  }, 60000);
});

describe("a judge that gives every row one verdict", () => {
  type Warned = { message: string; type?: string; code?: string };
  function spyWarnings(): { process: Warned[]; events: TypelmEvent[]; off: () => void } {
    const process_: Warned[] = [];
    jest.spyOn(process, "emitWarning").mockImplementation(((message: string, options?: { type?: string; code?: string }) => {
      process_.push({ message, ...options });
    }) as typeof process.emitWarning);
    const events: TypelmEvent[] = [];
    const off = Instrumentation.subscribe("evaluation.warning", (e) => events.push(e));
    return { process: process_, events, off };
  }

  it("is warned of in the report, the stored run (typelm show) and on the terminal", async () => {
    const lab = store("one-verdict");
    const seen = spyWarnings();
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true, lm: judgeLM("pass") });
    const report = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: program().module, testExamples: examples, metrics: [judge] });
    seen.off();
    const sentence = 'Judge "correct" gave every one of the 4 rows it judged the same verdict (pass): a judge that cannot tell answers apart looks like that. ' +
      "Check its model and criteria, e.g. calibrate it against human labels (calibrate(judge, examples)).";
    expect(report.warnings).toEqual([sentence]);
    expect(seen.process).toEqual([{ message: sentence, type: "TypelmWarning", code: "TYPELM_JUDGE_ONE_VERDICT" }]);
    expect(seen.events.map((e) => e.payload)).toEqual([expect.objectContaining({ runId: report.runId, code: "TYPELM_JUDGE_ONE_VERDICT", message: sentence })]);
    const stored = lab.run(report.runId!)!;
    expect(stored.summary["warnings"]).toEqual([sentence]);
    expect(showRun(stored)).toContain(`warning: ${sentence}`);
  });

  it("gives no warning when the verdicts differ", async () => {
    const seen = spyWarnings();
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true, lm: judgeLM() });
    const report = await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance: program().module, testExamples: examples, metrics: [judge] });
    seen.off();
    expect(report.results.map((r) => r.scores["correct"])).toEqual([1, 0, 1, 0]);
    expect(report.warnings).toEqual([]);
    expect(seen.process).toEqual([]);
  });

  it("typelm run: report.md and results.json carry the warning", async () => {
    const cwd = join(dir, "run-report");
    mkdirSync(cwd, { recursive: true });
    stores.push(join(cwd, ".typelm/lab.sqlite"));
    spyWarnings();
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true, lm: judgeLM("fail") });
    const outcome = await runAndReport(experiment("report", judge, program().module), { cwd, env: { ...process.env, ...offline }, ollamaProbeMs: 200 });
    const md = readFileSync(join(outcome.dir, "report.md"), "utf8");
    expect(md).toContain('**Warning** (baseline): Judge "correct" gave every one of the 4 rows it judged the same verdict (fail)');
    const results = JSON.parse(readFileSync(join(outcome.dir, "results.json"), "utf8")) as { baseline: { warnings?: string[] } };
    expect(results.baseline.warnings).toHaveLength(1);
    expect(results.baseline.warnings![0]).toMatch(/^Judge "correct" gave every one of the 4 rows/);
  }, 120000);
});
