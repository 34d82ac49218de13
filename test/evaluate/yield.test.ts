// An evaluation on an instant model gives the event loop a turn now and then, so a timer (a
// notebook redrawing its progress, a UI) runs while it goes on. Before, a 100,000-row run never did.
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

/** Spins for `ms` without giving the event loop a turn. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* synchronous work */ }
}

describe("Evaluation on an instant model", () => {
  it("lets a 20 ms timer set before the run fire while the run is still going", async () => {
    const lm = new ScriptedLM(() => ({ sentiment: "positive" }));
    const moduleInstance = new Predict(Classify).configure((c) => { c.lm = lm; });
    const testExamples = Array.from({ length: 1500 }, (_, i) => new FewShotExample({ input: { sentence: `s${i}` }, output: { sentiment: "positive" } }));
    // A synchronous metric of 0.2 ms makes the run last at least 300 ms on any machine; the model answers at once.
    const slowMetric = () => {
      busy(0.2);
      return true;
    };
    let firedAt: number | undefined;
    const started = performance.now();
    setTimeout(() => { firedAt = performance.now(); }, 20);
    const report = await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance, testExamples, metrics: [slowMetric] });
    const ended = performance.now();
    expect(report.results).toHaveLength(1500);
    expect(ended - started).toBeGreaterThan(200);
    expect(firedAt).toBeDefined();
    // It fired during the run, long before its end (generous margin for a loaded machine).
    expect(firedAt! - started).toBeLessThan((ended - started) / 2);
  });
});
