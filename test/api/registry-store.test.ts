/** API.md "Registry", "The lab store", "Datasets and the command line" — imports by package name (dist/). */
import { describe, expect, test } from "@jest/globals";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import {
  ChainOfThought, ConfigurationError, Evaluation, FewShotExample, LabStore, Module, Predict, Registry, Signature, ValidationError,
  loadDataset, resetConfiguration,
} from "typelm";
import { ScriptedLM } from "typelm/testing";
import { useTempLab } from "./temp-lab.js";

const root = resolve(import.meta.dirname, "../..");

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
}
class Other extends Signature {
  static override description = "Something else.";
  static override input = { sentence: z.string() };
  static override output = { topic: z.string() };
}
class Pipeline extends Module {
  classify = new Predict(Classify);
  async forward(i: { sentence: string }) { return this.classify.call(i); }
}

const temp = useTempLab("reg");

describe("Registry", () => {
  test("store → { name, version, createdAt }; versions count up; versions(); load latest or { version }", async () => {
    const registry = new Registry({ path: join(temp.dir, "reg.sqlite") });
    const m = new Pipeline();
    m.classify.instruction = "VERSION-ONE";
    const v1 = await registry.store({ moduleInstance: m, name: "sentiment", metadata: { note: "first", score: 0.5 } });
    expect(v1).toMatchObject({ name: "sentiment", version: 1 });
    expect(Number.isNaN(Date.parse(String(v1.createdAt)))).toBe(false);
    m.classify.instruction = "VERSION-TWO";
    m.classify.demos = [new FewShotExample({ input: { sentence: "s" }, output: { sentiment: "negative" }, id: "demo-7" })];
    const v2 = await registry.store({ moduleInstance: m, name: "sentiment", metadata: { note: "second" } });
    expect(v2.version).toBe(2);
    expect((await registry.store({ moduleInstance: m, name: "other-name" })).version).toBe(1);
    const versions = await registry.versions("sentiment");
    expect(versions.map((v) => v.version).sort()).toEqual([1, 2]);
    const first = versions.find((v) => v.version === 1)!;
    expect(first).toMatchObject({ name: "sentiment", score: 0.5 });
    expect(first.metadata).toMatchObject({ note: "first" });
    expect(first.createdAt).toBeDefined();
    const latest = await registry.load<Pipeline>("sentiment");
    expect(latest).toBeInstanceOf(Pipeline);
    expect(latest.classify.instruction).toBe("VERSION-TWO");
    expect(latest.classify.demos.map((d) => d.id)).toEqual(["demo-7"]);
    const old = await registry.load<Pipeline>("sentiment", { version: 1 });
    expect(old.classify.instruction).toBe("VERSION-ONE");
  });

  test("the default file is .typelm/lab.sqlite; the score defaults to the module's last evaluation", async () => {
    resetConfiguration();
    const cwd = process.cwd();
    process.chdir(temp.dir);
    try {
      const m = new Predict(Classify);
      m.configure((c) => { c.lm = new ScriptedLM(() => ({ sentiment: "positive" })); });
      const data = [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" }, id: "a" }),
        new FewShotExample({ input: { sentence: "b" }, output: { sentiment: "negative" }, id: "b" })];
      await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: data });
      await new Registry().store({ moduleInstance: m, name: "scored" });
      expect(existsSync(join(temp.dir, ".typelm", "lab.sqlite"))).toBe(true);
      expect((await new Registry().versions("scored"))[0]!.score).toBeCloseTo(0.5, 10);
    } finally { process.chdir(cwd); }
  });

  test("loading into a module whose signature differs is a ConfigurationError naming the predictor", async () => {
    const registry = new Registry({ path: join(temp.dir, "reg.sqlite") });
    await registry.store({ moduleInstance: new Pipeline(), name: "p" });
    class Mismatch extends Module {
      classify = new Predict(Other);
      async forward(i: { sentence: string }) { return this.classify.call(i); }
    }
    const target = new Mismatch();
    const err = await registry.load("p", { into: target }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(String((err as Error).message)).toContain("classify");
    expect(target.classify.instruction).toBe("Something else.");
  });

  test("across processes: store here, load in another process by Registry.register or { into }: identical prompts", async () => {
    const path = join(temp.dir, "cross.sqlite");
    const m = new Pipeline();
    m.classify.instruction = "CROSS-PROCESS-INSTRUCTION";
    m.classify.demos = [new FewShotExample({ input: { sentence: "demo s" }, output: { sentiment: "neutral" }, id: "d1" })];
    await new Registry({ path }).store({ moduleInstance: m, name: "cross" });
    const lm = new ScriptedLM([{ sentiment: "neutral" }]);
    await m.call({ sentence: "hello" }, { lm });
    const here = JSON.stringify(lm.requests[0]!.messages);
    const script = `
      import { z } from "zod";
      import { Module, Predict, Registry, Signature } from "typelm";
      import { ScriptedLM } from "typelm/testing";
      class Classify extends Signature {
        static description = "Classify the sentiment of a sentence.";
        static input = { sentence: z.string() };
        static output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
      }
      class Pipeline extends Module {
        classify = new Predict(Classify);
        async forward(i) { return this.classify.call(i); }
      }
      const out = [];
      for (const how of ["register", "into"]) {
        const registry = new Registry({ path: ${JSON.stringify(path)} });
        let loaded;
        if (how === "register") { Registry.register(Pipeline); loaded = await registry.load("cross"); }
        else loaded = await registry.load("cross", { into: new Pipeline() });
        const lm = new ScriptedLM([{ sentiment: "neutral" }]);
        await loaded.call({ sentence: "hello" }, { lm });
        out.push(JSON.stringify(lm.requests[0].messages));
      }
      console.log(JSON.stringify(out));`;
    const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    const [byRegister, byInto] = JSON.parse(stdout.trim().split("\n").pop()!) as string[];
    expect(byRegister).toBe(here);
    expect(byInto).toBe(here);
    expect(here).toContain("CROSS-PROCESS-INSTRUCTION");
  }, 30_000);
});

describe("LabStore", () => {
  test("open() uses c.lab.path; runs({ kind }) newest first with summary fields; run(id); unknown id → undefined", async () => {
    const m = new ChainOfThought(Classify);
    m.configure((c) => { c.lm = new ScriptedLM(() => ({ reasoning: "r", sentiment: "positive" })); });
    const data = [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" }, id: "a" })];
    const r1 = await new Evaluation({ progress: false, name: "first" }).evaluate({ moduleInstance: m, testExamples: data });
    await new Promise((r) => setTimeout(r, 10));
    const r2 = await new Evaluation({ progress: false, name: "second" }).evaluate({ moduleInstance: m, testExamples: data });
    expect(existsSync(join(temp.dir, "lab.sqlite"))).toBe(true);
    const lab = LabStore.open();
    const runs = lab.runs({ kind: "evaluation" });
    expect(runs.map((r) => r.id)).toEqual([r2.runId, r1.runId]);
    expect(runs[0]).toMatchObject({ id: r2.runId, kind: "evaluation", name: "second", status: "completed" });
    expect(Number.isNaN(Date.parse(runs[0]!.startedAt))).toBe(false);
    expect(lab.runs({ kind: "optimization" })).toEqual([]);
    const run = lab.run(r1.runId!);
    expect(run && run.kind === "evaluation" ? run.rows[0]!.exampleId : null).toBe("a");
    expect(lab.run("no-such-run")).toBeUndefined();
  });

  test("another process reads the runs (typelm runs lists them)", async () => {
    const m = new Predict(Classify);
    m.configure((c) => { c.lm = new ScriptedLM(() => ({ sentiment: "positive" })); });
    const data = [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" }, id: "a" })];
    const report = await new Evaluation({ progress: false, name: "listed-run" }).evaluate({ moduleInstance: m, testExamples: data });
    const script = `import { LabStore } from "typelm"; console.log(JSON.stringify(LabStore.open({ path: ${JSON.stringify(join(temp.dir, "lab.sqlite"))} }).runs().map((r) => r.id)));`;
    const ids = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" }).trim().split("\n").pop()!);
    expect(ids).toContain(report.runId);
    // The CLI reads .typelm/lab.sqlite of its working directory.
    const cwdDir = mkdtempSync(join(tmpdir(), "typelm-api-cli-"));
    try {
      execFileSync(process.execPath, ["--input-type=module", "-e", `
        import { configure, Evaluation, FewShotExample, Predict, Signature } from "typelm";
        import { ScriptedLM } from "typelm/testing";
        import { z } from "zod";
        process.chdir(${JSON.stringify(cwdDir)});
        const S = Signature.define({ name: "S", description: "d", input: { q: z.string() }, output: { a: z.string() } });
        const m = new Predict(S); m.configure((c) => { c.lm = new ScriptedLM(() => ({ a: "x" })); });
        await new Evaluation({ progress: false, name: "cli-visible-run" }).evaluate({ moduleInstance: m,
          testExamples: [new FewShotExample({ input: { q: "q" }, output: { a: "x" }, id: "q" })] });`], { cwd: root, encoding: "utf8" });
      const listed = execFileSync(process.execPath, [join(root, "dist/pkg/bin.js"), "runs"], { cwd: cwdDir, encoding: "utf8" });
      expect(listed).toContain("cli-visible-run");
    } finally { rmSync(cwdDir, { recursive: true, force: true }); }
  }, 30_000);
});

describe("loadDataset", () => {
  test("the four bundled datasets: train/dev/test FewShotExamples with ids, a signature, info, licence and attribution", async () => {
    for (const name of ["poem-sentiment", "banking77", "gsm8k", "restaurant8k"]) {
      const { train, dev, test: testSplit, signature, info } = await loadDataset(name);
      for (const split of [train, dev, testSplit]) {
        expect(split.length).toBeGreaterThan(0);
        expect(split[0]).toBeInstanceOf(FewShotExample);
        expect(typeof split[0]!.id).toBe("string");
        expect(new Set(split.map((e) => e.id)).size).toBe(split.length);
      }
      expect(train[0]!.id).toMatch(/^train-/);
      expect(typeof signature.outputJsonSchema).toBe("function");
      expect(info).toBeDefined();
      expect(existsSync(join(root, "datasets", name, "LICENSE"))).toBe(true);
      expect(readFileSync(join(root, "datasets", name, "ATTRIBUTION.md"), "utf8").length).toBeGreaterThan(100);
    }
    const poem = await loadDataset("poem-sentiment");
    expect([poem.train.length, poem.dev.length, poem.test.length]).toEqual([892, 105, 104]);
  });

  test("a folder path with the same layout loads; an unknown name is an error", async () => {
    const byPath = await loadDataset(join(root, "datasets", "poem-sentiment"));
    expect(byPath.test.map((e) => e.id)).toEqual((await loadDataset("poem-sentiment")).test.map((e) => e.id));
    await expect(loadDataset("no-such-dataset")).rejects.toThrow(ValidationError);
  });
});

describe("typelm reproduce", () => {
  test("writes reports/<experiment>/ with the model named on the first line; results.json is byte-identical on a rerun", () => {
    const cwdDir = mkdtempSync(join(tmpdir(), "typelm-api-repro-"));
    // No --lm, no TYPELM_LM, an Ollama host where nothing answers: the offline stand-in runs.
    const env = { ...process.env, TYPELM_LM: "", OLLAMA_HOST: "http://127.0.0.1:9" };
    delete (env as Record<string, string | undefined>).TYPELM_LM;
    try {
      const run = () => execFileSync(process.execPath, [join(root, "dist/pkg/bin.js"), "reproduce", "poem-sentiment", "--limit", "8", "--seed", "3"],
        { cwd: cwdDir, encoding: "utf8", env, stdio: "pipe" });
      run();
      const out = join(cwdDir, "reports", "poem-sentiment");
      const first = readFileSync(join(out, "results.json"));
      expect(readFileSync(join(out, "report.md"), "utf8").split("\n")[0]).toMatch(/stand-in/);
      run();
      expect(readFileSync(join(out, "results.json")).equals(first)).toBe(true);
      expect(existsSync(join(out, "metrics.png"))).toBe(true);
      let failed = false;
      try { execFileSync(process.execPath, [join(root, "dist/pkg/bin.js"), "reproduce", "no-such-experiment"], { cwd: cwdDir, env, stdio: "pipe" }); } catch { failed = true; }
      expect(failed).toBe(true);
    } finally { rmSync(cwdDir, { recursive: true, force: true }); }
  }, 60_000);

  test("TYPELM_LM chooses the model (named in the report); the LM cache makes a second run send no provider request", async () => {
    const { startFakeProvider } = await import("typelm/testing");
    const fake = await startFakeProvider({ defaultReply: { label: "positive" } });
    const cwdDir = mkdtempSync(join(tmpdir(), "typelm-api-repro-lm-"));
    const run = () => new Promise<void>((done, fail) => {
      execFile(process.execPath, [join(root, "dist/pkg/bin.js"), "reproduce", "poem-sentiment", "--limit", "4"],
        { cwd: cwdDir, env: { ...process.env, TYPELM_LM: "ollama/llama3.2", OLLAMA_HOST: fake.url } },
        (error, _out, stderr) => (error ? fail(new Error(stderr)) : done()));
    });
    try {
      await run();
      const first = fake.requests.length;
      expect(first).toBeGreaterThan(0);
      expect(fake.requests[0]!.body.model).toBe("llama3.2");
      expect(readFileSync(join(cwdDir, "reports", "poem-sentiment", "report.md"), "utf8").split("\n")[0]).toContain("ollama/llama3.2");
      await run();
      expect(fake.requests.length).toBe(first);
    } finally { await fake.close(); rmSync(cwdDir, { recursive: true, force: true }); }
  }, 60_000);
});
