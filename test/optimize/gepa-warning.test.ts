// GEPA without validation examples scores and chooses its candidates on its training examples: it
// warns, on the event bus (the logger writes it at level warn), as a Node process warning, and in
// the run's summary. With validation examples it does not.
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { configure } from "../../lib/config.js";
import { GEPA, Instrumentation } from "../../lib/index.js";
import type { TypelmEvent } from "../../lib/index.js";
import { SCORED_ON_TRAINING } from "../../lib/optimize/gepa/run.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { feedbackMetric, makeToneExamples, reflector, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { useTempLab } from "./task.js";

const train = makeToneExamples(10, 1, "t");
const val = makeToneExamples(6, 2, "v");

useTempLab();

afterEach(() => { jest.restoreAllMocks(); });

type Warned = { message: string; type?: string; code?: string };

/** Runs a small GEPA with or without validation examples; returns the run, the bus's warnings, the log lines and the process warnings. */
async function gepaRun(withValidation: boolean) {
  const lines: string[] = [];
  configure((c) => {
    c.instrumentation.enabled = true;
    c.instrumentation.subscribers = ["logger"];
    c.logger.level = "warn";
    c.logger.formatter = "json";
    c.logger.output = (line) => lines.push(line);
  });
  const events: TypelmEvent[] = [];
  Instrumentation.subscribe("optimizer.warning", (e) => events.push(e));
  // Jest gives each test file a process object of its own; the warning is checked where it is emitted.
  const processWarnings: Warned[] = [];
  jest.spyOn(process, "emitWarning").mockImplementation(((message: string, options?: { type?: string; code?: string }) => {
    processWarnings.push({ message, ...options });
  }) as typeof process.emitWarning);
  const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 40, reflectionLM: new ScriptedLM(reflector()), seed: 3, progress: false });
  await gepa.compile({
    moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train,
    ...(withValidation ? { validationExamples: val } : {}),
  });
  return { run: gepa.lastRun!, events, lines, processWarnings };
}

describe("GEPA scoring on its training examples", () => {
  it("warns on the bus, through the logger, as a process warning and in the run's summary", async () => {
    const { run, events, lines, processWarnings } = await gepaRun(false);
    expect(run.summary.validation).toBe("training");
    expect(events).toHaveLength(1);
    const p = events[0]!.payload as Record<string, unknown>;
    expect(p).toMatchObject({ runId: run.id, optimizer: "GEPA", code: SCORED_ON_TRAINING });
    expect(p.message).toMatch(/no validationExamples/);
    expect(p.message).toMatch(/10 training examples/);
    expect(p.message).toMatch(/optimistic/);
    expect(run.summary.warnings).toEqual([p.message]);
    // The logger, set to show warnings and above, writes exactly this event, at level warn.
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.map((l) => [l.level, l.event])).toEqual([["warn", "optimizer.warning"]]);
    expect(logged[0]!.message).toBe(p.message);
    expect(processWarnings).toEqual([{ message: p.message, type: "TypelmWarning", code: SCORED_ON_TRAINING }]);
  });

  it("gives no warning when validation examples are given", async () => {
    const { run, events, lines, processWarnings } = await gepaRun(true);
    expect(run.summary.validation).toBe("given");
    expect(run.trials.length).toBeGreaterThan(1);
    expect(events).toEqual([]);
    expect(lines).toEqual([]);
    expect(run.summary.warnings).toBeUndefined();
    expect(processWarnings).toEqual([]);
  });
});
