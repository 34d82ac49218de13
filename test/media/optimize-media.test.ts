// Media through the optimizers, end to end on the bundled shapes task and its simulated vision model:
// demos holding pictures are chosen and kept as Image values, GEPA's reflection sees each picture as
// its kind, type, size and hash only, and a registry version with picture demos loads back as Images.
import { describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { ConfigurationError, FewShotExample, GEPA, Image, LabStore, loadDataset, MIPROv2, Predict, Registry, SimpleOptimizer } from "../../lib/index.js";
import { SHAPES_CAREFUL_PHRASE, SimulatedShapesLM, shapesTable } from "../../lib/testing/index.js";
import { useTempLab } from "../optimize/task.js";
import { demoSetsFromJSON } from "../../lib/optimize/bootstrap.js";
import { runMedia } from "../../lib/optimize/run-media.js";
import type { OptimizationRun } from "../../lib/store/records.js";

const labFile = useTempLab();
const ds = await loadDataset("shapes");
const counts = shapesTable([...ds.train, ...ds.dev, ...ds.test]);
const train = ds.train.slice(0, 60);
const val = ds.dev.slice(0, 40);
const test = ds.test;

async function accuracy(p: Predict, lm: SimulatedShapesLM): Promise<number> {
  let right = 0;
  for (const ex of test) if ((await p.call(ex.input, { lm })).count === ex.output.count) right++;
  return right / test.length;
}

const base64Prefix = (image: unknown) => (image as Image).base64.slice(0, 40);

describe("optimizers with picture demos (shapes task, simulated vision model)", () => {
  it("MIPROv2 keeps demos as Image values, finds the careful instruction and beats the zero-shot program", async () => {
    const lm = new SimulatedShapesLM({ counts });
    const program = new Predict(ds.signature!).configure((c) => { c.lm = lm; });
    const mipro = new MIPROv2({ kDemos: 3, numCandidates: 6, mode: "light", seed: 7, promptModel: lm });
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    expect(tuned.demos.length).toBeGreaterThan(0);
    for (const d of tuned.demos) {
      expect(d.input.image).toBeInstanceOf(Image);
      // The very value of the training example with that id (same bytes), not a copy made from JSON.
      expect((d.input.image as Image).sha256).toBe((train.find((e) => e.id === d.id)!.input.image as Image).sha256);
    }
    // The recorded bootstrap trial holds references, never the bytes.
    const sets = JSON.stringify(mipro.lastRun!.trials.find((t) => t.kind === "bootstrap")!.data.sets);
    expect(sets).toContain('"$media":"image"');
    expect(sets).not.toContain(base64Prefix(train[0]!.input.image));
    // What a resumed run reads: the trial as stored in the lab file, its references found among the examples.
    const stored = LabStore.open().run(mipro.lastRun!.id) as OptimizationRun;
    const fromStore = demoSetsFromJSON(stored.trials.find((t) => t.kind === "bootstrap")!.data.sets, runMedia(train.map((e) => ({ example: e, id: e.id! })), program));
    const demosFromStore = fromStore.self!.flat();
    expect(demosFromStore.length).toBeGreaterThan(0);
    for (const d of demosFromStore) expect((d.input.image as Image).sha256).toBe((train.find((e) => e.id === d.id)!.input.image as Image).sha256);
    expect(tuned.instruction).toContain(SHAPES_CAREFUL_PHRASE);
    const baseline = await accuracy(program, lm);
    const score = await accuracy(tuned, lm);
    expect(score).toBeGreaterThan(baseline + 0.2);
    // The search was a real one: over every (instruction, demo set) pair it could choose, a random pick
    // scores well below what it chose, and what it chose is within 5 points of the best pair.
    const instructions = (stored.trials.find((t) => t.kind === "propose")!.data.instructions as Record<string, string[]>).self!;
    const pairs: number[] = [];
    for (const instruction of instructions) for (const demos of fromStore.self!) pairs.push(await accuracy(new Predict(ds.signature!, { instruction, demos }), lm));
    const mean = pairs.reduce((a, b) => a + b, 0) / pairs.length;
    expect(score).toBeGreaterThan(mean + 0.1);
    expect(score).toBeGreaterThanOrEqual(Math.max(...pairs) - 0.05);
  }, 300_000);

  it("SimpleOptimizer's bootstrapped demos are Image values too", async () => {
    const lm = new SimulatedShapesLM({ counts });
    const program = new Predict(ds.signature!).configure((c) => { c.lm = lm; });
    const tuned = await new SimpleOptimizer({ kDemos: 3, numTrials: 8, seed: 1 }).compile({ moduleInstance: program, trainingExamples: train });
    expect(tuned.demos.length).toBeGreaterThan(0);
    for (const d of tuned.demos) expect(d.input.image).toBeInstanceOf(Image);
  }, 300_000);

  it("GEPA's reflection prompt shows each picture as [image image/png … sha256:…], never its bytes or base64", async () => {
    const lm = new SimulatedShapesLM({ counts });
    const reflectionLM = new SimulatedShapesLM({ counts, model: "reflection" });
    // Demos given with the program (pictures of 1 and 2 shapes: no help counting); GEPA keeps them as they are.
    const given = [train.find((e) => e.output.count === 1)!, train.find((e) => e.output.count === 2)!];
    const program = new Predict(ds.signature!, { demos: given }).configure((c) => { c.lm = lm; });
    const gepa = new GEPA({ maxMetricCalls: 120, minibatchSize: 4, reflectionLM, seed: 3 });
    const tuned = await gepa.compile({ moduleInstance: program, trainingExamples: train.slice(0, 30), validationExamples: val.slice(0, 20) });
    const prompts = reflectionLM.requests.map((r) => r.messages.map((m) => m.content).join("\n"));
    expect(prompts.length).toBeGreaterThan(0);
    const shown = [...prompts.join("\n").matchAll(/\[image image\/png (\d+\.\d) kB sha256:([0-9a-f]{12})…\]/g)];
    expect(shown.length).toBeGreaterThan(0);
    const bySha = new Map([...train].map((e) => [(e.input.image as Image).sha256.slice(0, 12), e.input.image as Image]));
    for (const [, kb, sha] of shown) expect(kb).toBe(((bySha.get(sha!)?.size ?? NaN) / 1000).toFixed(1));
    for (const text of prompts) {
      for (const e of train.slice(0, 30)) expect(text).not.toContain(base64Prefix(e.input.image));
      expect(text).not.toContain('"0":137');
    }
    expect(tuned.demos.map((d) => d.input.image)).toEqual(given.map((e) => e.input.image));
    for (const d of tuned.demos) expect(d.input.image).toBeInstanceOf(Image);
    // Reflection on under-counts gave the careful instruction, and it scores better than the seed.
    expect(tuned.instruction).toContain(SHAPES_CAREFUL_PHRASE);
    expect(await accuracy(tuned, lm)).toBeGreaterThan(await accuracy(program, lm));
  }, 300_000);

  it("a registry version whose demos hold pictures stores references (bytes once beside the file) and loads them as Image values", async () => {
    const demos = [train[0]!, train[1]!, train[0]!].map((e, i) => new FewShotExample({ input: e.input, output: e.output, id: `d${i}` }));
    const program = new Predict(ds.signature!, { instruction: "Count.", demos });
    await new Registry({ path: labFile() }).store({ moduleInstance: program, name: "shapes" });
    const db = new Database(labFile(), { readonly: true });
    const state = (db.prepare("SELECT state_json FROM registry_versions WHERE name = 'shapes'").get() as { state_json: string }).state_json;
    db.close();
    expect(state).toContain(`"sha256":"${(train[0]!.input.image as Image).sha256}"`);
    expect(state).not.toContain(base64Prefix(train[0]!.input.image));
    const folder = join(dirname(labFile()), "media");
    expect(readdirSync(folder).sort()).toEqual([(train[0]!.input.image as Image).sha256, (train[1]!.input.image as Image).sha256].map((s) => `${s}.bin`).sort());
    const loaded = await new Registry({ path: labFile() }).load<Predict>("shapes", { into: new Predict(ds.signature!) });
    expect(loaded.demos).toHaveLength(3);
    loaded.demos.forEach((d, i) => {
      const image = d.input.image as Image;
      expect(image).toBeInstanceOf(Image);
      expect(image.mediaType).toBe("image/png");
      expect(Buffer.from(image.bytes!).equals(readFileSync(join(import.meta.dirname, "../../datasets/shapes", `images/${demos[i]!.id === "d1" ? train[1]!.id : train[0]!.id}.png`)))).toBe(true);
    });
    // dumpState / loadState in one process keep the pictures too.
    const copy = new Predict(ds.signature!).loadState(program.dumpState());
    expect(copy.demos[0]!.input.image).toBeInstanceOf(Image);
  });

  it("a registry on PostgreSQL refuses picture demos before any connection, naming the store without its password", async () => {
    const program = new Predict(ds.signature!, { demos: [train[0]!] });
    // Port 1 on the loopback: nothing listens there, so reaching the check before any connection is what passes.
    const error = await new Registry({ path: "postgres://typelm:s3cret-pw@127.0.0.1:1/lab" }).store({ moduleInstance: program, name: "shapes" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/demos hold 1 media value\(s\), and a registry on PostgreSQL .* cannot keep media bytes yet/);
    expect((error as Error).message).not.toContain("s3cret-pw");
  });
});
