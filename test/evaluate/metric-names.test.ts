// A metric whose name is an object-model name would vanish from `report.metrics` (`__proto__`) or
// shadow what every object has: such names are refused before anything runs.
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature, SimpleOptimizer, ValidationError } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

function setup() {
  const lm = new ScriptedLM(() => ({ sentiment: "positive" }));
  const moduleInstance = new Predict(Classify).configure((c) => { c.lm = lm; });
  const testExamples = [0, 1, 2, 3].map((i) => new FewShotExample({ input: { sentence: `s${i}` }, output: { sentiment: "positive" }, id: `ex-${i}` }));
  return { lm, moduleInstance, testExamples };
}

/** A metric function carrying `name`. */
function named(name: string) {
  const metric = () => 1;
  Object.defineProperty(metric, "name", { value: name });
  return metric;
}

describe("metric names", () => {
  for (const name of ["__proto__", "constructor", "prototype"]) {
    it(`refuses a metric named "${name}" with a ValidationError naming it, before any model call`, async () => {
      const { lm, moduleInstance, testExamples } = setup();
      const run = new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance, testExamples, metrics: ["accuracy", named(name)] });
      await expect(run).rejects.toThrow(ValidationError);
      await expect(new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance, testExamples, metrics: [named(name)] }))
        .rejects.toThrow(new RegExp(`metrics\\[0\\] is named "${name}"`));
      expect(lm.requests).toHaveLength(0);
    });
  }

  it("reports an ordinary metric under its name, as before", async () => {
    const { moduleInstance, testExamples } = setup();
    const report = await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance, testExamples, metrics: [named("proto"), "accuracy"] });
    expect(report.metrics).toEqual({ proto: 1, accuracy: 1 });
  });

  it("an optimizer still scores with a metric named __proto__ (the name is not a report key there)", async () => {
    const { moduleInstance, testExamples } = setup();
    const opt = new SimpleOptimizer({ metric: named("__proto__"), numTrials: 1, kDemos: 0, progress: false });
    await opt.compile({ moduleInstance, trainingExamples: testExamples });
    expect(opt.lastRun!.trials.map((t) => [t.score, t.error])).toEqual([[1, null], [1, null]]);
  });
});
