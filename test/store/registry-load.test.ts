import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, Registry } from "../../lib/index.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { SentimentProgram, prompts, tunedProgram } from "./registry-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-registry-load-"));
let n = 0;
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

/** A registry holding version 1 of "sentiment" (the tuned two-predictor program), with `column` then overwritten. */
async function tampered(column: "state_json" | "metadata_json", text: string): Promise<Registry> {
  const path = join(dir, `r${n++}.sqlite`);
  opened.push(path);
  const registry = new Registry({ path });
  await registry.store({ moduleInstance: tunedProgram(), name: "sentiment" });
  openStoreSync(path).prepare(`UPDATE registry_versions SET ${column} = ? WHERE name = 'sentiment' AND version = 1`).run(text);
  return registry;
}

/** The stored state of tunedProgram(), changed by `edit`. */
function editedState(edit: (state: { predictors: Record<string, Record<string, unknown>> }) => void): string {
  const predictors = Object.fromEntries(tunedProgram().namedPredictors().map(([path, p]) => [path, {
    instruction: p.instruction, demos: p.demos.map((d) => d.toJSON()), signature: "", signatureName: "",
  }]));
  const state = { predictors };
  edit(state);
  return JSON.stringify(state);
}

async function loadError(registry: Registry, into?: SentimentProgram): Promise<unknown> {
  return registry.load("sentiment", into === undefined ? {} : { into }).then(() => undefined, (e: unknown) => e);
}

describe("registry.load on a damaged stored version", () => {
  it.each([
    ["state that is not JSON", "{\"predictors\": {"],
    ["state without predictors", "{}"],
    ["state that is null", "null"],
    ["a predictor that is not an object", editedState((s) => { (s.predictors as Record<string, unknown>).classify = 7; })],
  ])("%s is a ConfigurationError naming the name and version, not a TypeError or SyntaxError", async (_what, text) => {
    const error = await loadError(await tampered("state_json", text));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('"sentiment" v1');
    expect((error as Error).message).toMatch(/stored state .* is damaged/);
  });

  it("a predictor whose instruction is not a string or whose demos are not a list names the predictor and the field", async () => {
    const registry = await tampered("state_json", editedState((s) => {
      s.predictors.classify!.instruction = 3;
      s.predictors.classify!.demos = "none";
    }));
    const error = await loadError(registry);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('"sentiment" v1');
    expect((error as Error).message).toContain('predictor "classify"');
    expect((error as Error).message).toContain("instruction");
  });

  it("damaged metadata makes versions() a ConfigurationError naming the name and version", async () => {
    const registry = await tampered("metadata_json", "{not json");
    const error = await registry.versions("sentiment").then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('"sentiment" v1');
  });
});

describe("registry.load({ into }) that fails", () => {
  it("leaves every predictor of the target untouched when a stored demo cannot be rebuilt", async () => {
    const path = join(dir, `r${n++}.sqlite`);
    opened.push(path);
    const registry = new Registry({ path });
    await registry.store({ moduleInstance: tunedProgram(), name: "sentiment" });
    // Keep the signature fingerprints (so the shape check passes) and break one demo of the first predictor.
    const db = openStoreSync(path);
    const state = JSON.parse(db.prepare<[], { state_json: string }>("SELECT state_json FROM registry_versions").get()!.state_json);
    state.predictors.classify.demos[1].input = null;
    db.prepare("UPDATE registry_versions SET state_json = ?").run(JSON.stringify(state));

    const target = new SentimentProgram();
    const before = prompts(target);
    const error = await loadError(registry, target);
    expect(prompts(target)).toEqual(before);
    expect(target.classify.instruction).toBe(new SentimentProgram().classify.instruction);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('"sentiment" v1');
    expect((error as Error).message).toContain('predictor "classify"');
  });

  it("a signature mismatch on the second predictor leaves the first untouched too", async () => {
    const registry = await tampered("state_json", editedState((s) => {
      s.predictors.classify!.signature = "will not match";
    }));
    const target = new SentimentProgram();
    const before = prompts(target);
    expect(await loadError(registry, target)).toBeInstanceOf(ConfigurationError);
    expect(prompts(target)).toEqual(before);
  });
});
