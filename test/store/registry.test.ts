import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  ChainOfThought, ConfigurationError, FewShotExample, Module, Predict, Registry, Signature, ValidationError,
  configure, resetConfiguration,
} from "../../lib/index.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { noteScore } from "../../lib/store/module-score.js";
import { Classify, Explain, SentimentProgram, prompts, tunedProgram } from "./registry-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-registry-"));
let n = 0;
const opened: string[] = [];
function freshRegistry(): Registry {
  const path = join(dir, `r${n++}.sqlite`);
  opened.push(path);
  return new Registry({ path });
}
afterEach(() => resetConfiguration());
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

describe("store and load in one process", () => {
  it("rebuilds a bare Predict with identical prompts, demo ids included, without `into`", async () => {
    const registry = freshRegistry();
    const original = new Predict(Classify, {
      instruction: "Decide the sentiment. Sarcasm is negative.",
      demos: [new FewShotExample({ id: "train-17", input: { sentence: "Nice" }, output: { sentiment: "positive" } })],
    });
    const v = await registry.store({ moduleInstance: original, name: "bare" });
    expect(v).toEqual({ name: "bare", version: 1, createdAt: expect.any(String) });
    original.instruction = "changed after storing";
    const loaded = await registry.load<Predict>("bare");
    expect(loaded).not.toBe(original);
    expect(loaded).toBeInstanceOf(Predict);
    expect(loaded.prompt().system()).toContain("Decide the sentiment. Sarcasm is negative.");
    expect(loaded.prompt().system()).toContain("Nice");
    expect(loaded.demos.map((d) => d.id)).toEqual(["train-17"]);
    original.instruction = "Decide the sentiment. Sarcasm is negative.";
    expect(loaded.prompt().system()).toBe(original.prompt().system());
  });

  it("rebuilds a composed module: every predictor's prompt is the stored one's", async () => {
    const registry = freshRegistry();
    const tuned = tunedProgram();
    await registry.store({ moduleInstance: tuned, name: "program" });
    const loaded = await registry.load("program");
    expect(loaded).toBeInstanceOf(SentimentProgram);
    expect(prompts(loaded)).toEqual(prompts(tuned));
    expect(prompts(loaded)).not.toEqual(prompts(new SentimentProgram())); // the tuning is what was restored
  });

  it("counts versions up per name and loads the latest or the one asked for", async () => {
    const registry = freshRegistry();
    const program = tunedProgram();
    await registry.store({ moduleInstance: program, name: "a", metadata: { note: "first", score: 0.5 } });
    program.classify.instruction = "second instruction";
    noteScore(program, 0.75);
    const second = await registry.store({ moduleInstance: program, name: "a", metadata: { note: "second" } });
    await registry.store({ moduleInstance: new SentimentProgram(), name: "other" });
    program.classify.instruction = "third instruction";
    await registry.store({ moduleInstance: program, name: "a", metadata: { score: 0.9 } });
    expect(second.version).toBe(2);
    const versions = await registry.versions("a");
    expect(versions.map((v) => [v.version, v.score, v.metadata])).toEqual([
      [1, 0.5, { note: "first", score: 0.5 }], [2, 0.75, { note: "second" }], [3, 0.9, { score: 0.9 }],
    ]);
    expect((await registry.versions("other")).map((v) => [v.version, v.score])).toEqual([[1, null]]);
    expect(await registry.versions("none")).toEqual([]);
    expect((await registry.load<SentimentProgram>("a")).classify.instruction).toBe("third instruction");
    expect((await registry.load<SentimentProgram>("a", { version: 2 })).classify.instruction).toBe("second instruction");
    await expect(registry.load("a", { version: 7 })).rejects.toThrow(/no version 7 of "a"; stored versions: 1, 2, 3/);
    await expect(registry.load("missing")).rejects.toThrow(ValidationError);
  });

  it("loads into a given module, which must have the stored signatures", async () => {
    const registry = freshRegistry();
    await registry.store({ moduleInstance: tunedProgram(), name: "p" });
    const target = new SentimentProgram();
    const loaded = await registry.load("p", { into: target });
    expect(loaded).toBe(target);
    expect(prompts(target)).toEqual(prompts(tunedProgram()));
  });

  it("a signature mismatch is a ConfigurationError naming the predictor, and changes nothing", async () => {
    const registry = freshRegistry();
    await registry.store({ moduleInstance: tunedProgram(), name: "p" });
    const OtherLabels = Signature.define({
      name: "Classify", description: "Classify the sentiment of the sentence.",
      input: { sentence: z.string() }, output: { sentiment: z.enum(["negative", "neutral", "positive"]) },
    });
    class Changed extends Module {
      classify = new Predict(OtherLabels);
      explain = new ChainOfThought(Explain);
      async forward() { return {}; }
    }
    const target = new Changed();
    const before = prompts(target);
    await expect(registry.load("p", { into: target })).rejects.toThrow(ConfigurationError);
    await expect(registry.load("p", { into: target })).rejects.toThrow(/predictor "classify" has signature Classify whose fields or types differ/);
    expect(prompts(target)).toEqual(before);
    // A module of another shape names the predictor it lacks.
    await expect(registry.load("p", { into: new Predict(Classify) })).rejects.toThrow(/predictor "self" is not in the stored version, which has classify, explain/);
  });

  it("keeps versions in an in-memory registry for its lifetime", async () => {
    const registry = new Registry({ path: ":memory:" });
    await registry.store({ moduleInstance: tunedProgram(), name: "m" });
    await registry.store({ moduleInstance: tunedProgram(), name: "m" });
    expect((await registry.versions("m")).map((v) => v.version)).toEqual([1, 2]);
    expect(prompts(await registry.load("m"))).toEqual(prompts(tunedProgram()));
  });

  it("uses c.lab's path by default", async () => {
    const path = join(dir, "configured.sqlite");
    opened.push(path);
    configure((c) => { c.lab = { path }; });
    expect(new Registry().path).toBe(path);
  });

  it("rejects what is not a module and an empty name", async () => {
    const registry = freshRegistry();
    await expect(registry.store({ moduleInstance: {} as Module, name: "x" })).rejects.toThrow(ValidationError);
    await expect(registry.store({ moduleInstance: new SentimentProgram(), name: " " })).rejects.toThrow(/non-empty string/);
    expect(() => Registry.register(class NotAModule {} as unknown as new () => Module)).toThrow(ValidationError);
  });

  it("rejects metadata that is not a JSON object, naming the field, and stores nothing", async () => {
    const registry = freshRegistry();
    const m = new SentimentProgram();
    await expect(registry.store({ moduleInstance: m, name: "x", metadata: { runs: 3n } })).rejects.toThrow(ValidationError);
    await expect(registry.store({ moduleInstance: m, name: "x", metadata: { runs: 3n } })).rejects.toThrow(
      /registry\.store: metadata cannot be stored as JSON \(Do not know how to serialize a BigInt\); give plain values: strings, numbers, booleans, arrays, objects/,
    );
    await expect(registry.store({ moduleInstance: m, name: "x", metadata: "a note" as unknown as Record<string, unknown> })).rejects.toThrow(
      /registry\.store: metadata must be an object such as \{ note: "\.\.\." \}; received string/,
    );
    expect(await registry.versions("x")).toEqual([]);
  });
});

describe("store in one process, load in another", () => {
  it("gives identical prompts, and says to register the class or pass `into` when neither is there", async () => {
    const registry = freshRegistry();
    const tuned = tunedProgram();
    await registry.store({ moduleInstance: new SentimentProgram(), name: "program" });
    await registry.store({ moduleInstance: tuned, name: "program", metadata: { score: 0.8 } });
    const bare = new Predict(Classify, { instruction: "Bare instruction.", demos: tuned.classify.demos });
    await registry.store({ moduleInstance: bare, name: "bare" });
    closeStoreSync(registry.path); // the child must read the file, not share our memory

    const out = join(dir, "child-out.json");
    const root = process.cwd();
    const run = spawnSync(process.execPath, [
      join(root, "node_modules/jest/bin/jest.js"), "--ci", "--runInBand", "--runTestsByPath", "test/store/registry.child.test.ts",
    ], {
      cwd: root, encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", TYPELM_CHILD_REGISTRY: registry.path, TYPELM_CHILD_OUT: out },
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: expect.stringContaining("1 passed") });
    const child = JSON.parse(readFileSync(out, "utf8")) as {
      unregistered: string; program: Record<string, string>; bare: Record<string, string>; demoIds: string[];
      versions: { version: number; score: number | null }[];
    };
    expect(child.program).toEqual(prompts(tuned));
    expect(child.program.classify).toContain("irony counts as negative");
    expect(child.bare).toEqual(prompts(bare));
    expect(child.demoIds).toEqual(["train-17", "train-3"]);
    expect(child.versions.map((v) => [v.version, v.score])).toEqual([[1, null], [2, 0.8]]);
    expect(child.unregistered).toMatch(
      /^Cannot rebuild "program" v2: its class SentimentProgram is not known in this process; call Registry\.register\(SentimentProgram\).*registry\.load\("program", \{ into: new SentimentProgram\(\.\.\.\) \}\)/,
    );
  }, 60000);
});
