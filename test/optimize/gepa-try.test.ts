import { it, expect } from "@jest/globals";
import { configure } from "../../lib/config.js";
import { GEPA } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { feedbackMetric, makeToneExamples, reflector, twoRuleModel, TopicAndTone } from "../../test/optimize/gepa-task.js";
it("try", async () => {
  configure((c) => { c.lab = false; });
  const lm = twoRuleModel();
  const program = new TopicAndTone().configure((c) => { c.lm = lm; });
  const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed: 7 });
  const out = await gepa.compile({ moduleInstance: program, trainingExamples: makeToneExamples(30, 1, "train"), validationExamples: makeToneExamples(12, 2, "val") });
  const run = gepa.lastRun!;
  for (const t of run.trials) console.log(t.index, t.kind, t.parents, t.score, t.budgetSpent, t.error, JSON.stringify(t.choices), JSON.stringify(t.data.reason ?? ""), JSON.stringify(t.instructions));
  console.log(run.summary);
  expect(out).toBeDefined();
});
