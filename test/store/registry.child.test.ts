import { describe, expect, it } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { ConfigurationError, Predict, Registry } from "../../lib/index.js";
import { Classify, SentimentProgram, prompts } from "./registry-fixture.js";

// Started by registry.test.ts in a fresh process: loads what the parent stored and writes the prompts out.
const path = process.env.TYPELM_CHILD_REGISTRY;
const out = process.env.TYPELM_CHILD_OUT;
const run = path !== undefined && out !== undefined ? describe : describe.skip;

run("registry in another process (only in the child process registry.test.ts starts)", () => {
  it("loads by registered class or into a module, and explains what to do without either", async () => {
    const registry = new Registry({ path });
    await expect(registry.load("program")).rejects.toThrow(ConfigurationError);
    const unregistered = await registry.load("program").catch((e: Error) => e.message);
    await expect(registry.load("bare")).rejects.toThrow(/Registry\.register\(Predict\).*into: new Predict/);
    Registry.register(SentimentProgram);
    const program = await registry.load("program");
    expect(program).toBeInstanceOf(SentimentProgram);
    const bare = await registry.load("bare", { into: new Predict(Classify) });
    const versions = await registry.versions("program");
    writeFileSync(out!, JSON.stringify({
      unregistered, program: prompts(program), bare: prompts(bare),
      demoIds: (program as SentimentProgram).classify.demos.map((d) => d.id), versions,
    }));
  });
});
