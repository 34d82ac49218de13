import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, Predict, Signature } from "../../lib/index.js";
import { withUsage } from "../../lib/lm/usage-scope.js";
import { SimulatedLM } from "../../lib/testing/index.js";

class Topic extends Signature {
  static override description = "Classify the topic of the text.";
  static override input = { text: z.string() };
  static override output = { topic: z.enum(["sport", "food", "music"]) };
}

const demos = [
  new FewShotExample({ input: { text: "the striker scored a goal" }, output: { topic: "sport" }, id: "d1" }),
  new FewShotExample({ input: { text: "a bowl of spicy noodles" }, output: { topic: "food" }, id: "d2" }),
  new FewShotExample({ input: { text: "the band played a loud song" }, output: { topic: "music" }, id: "d3" }),
];

describe("SimulatedLM", () => {
  it("answers the first label when the prompt holds neither a known rule nor demos", async () => {
    const lm = new SimulatedLM();
    const r = await new Predict(Topic).call({ text: "a song about noodles" }, { lm });
    expect(r.topic).toBe("sport");
    expect(lm.requests[0]!.decision).toBe("default");
    expect(lm.requests[0]!.read.inputs).toEqual({ text: "a song about noodles" });
    expect(lm.requests[0]!.read.instruction).toBe("Classify the topic of the text.");
  });

  it("copies the label of the demo whose input tokens overlap the call's inputs most", async () => {
    const lm = new SimulatedLM();
    const p = new Predict(Topic, { demos });
    expect((await p.call({ text: "the band and the song" }, { lm })).topic).toBe("music");
    expect((await p.call({ text: "spicy noodles again" }, { lm })).topic).toBe("food");
    expect(lm.requests.map((r) => r.decision)).toEqual(["demo:2", "demo:1"]);
    expect(lm.requests[0]!.read.demos[1]).toEqual({ input: { text: "a bowl of spicy noodles" }, output: { topic: "food" } });
  });

  it("breaks overlap ties toward the earlier demo", async () => {
    const lm = new SimulatedLM();
    const r = await new Predict(Topic, { demos }).call({ text: "zzz" }, { lm });
    expect(r.topic).toBe("sport");
    expect(lm.requests[0]!.decision).toBe("demo:0");
  });

  it("applies a rule only when its phrase is in the instruction", async () => {
    const rule = { phrase: "Look for food words", answer: (i: Record<string, unknown>) => ({ topic: String(i.text).includes("noodle") ? "food" : "music" }) };
    const lm = new SimulatedLM({ rules: [rule] });
    const plain = new Predict(Topic);
    const ruled = new Predict(Topic, { instruction: "Classify the text. look for FOOD words first." });
    expect((await plain.call({ text: "noodle soup" }, { lm })).topic).toBe("sport");
    expect((await ruled.call({ text: "noodle soup" }, { lm })).topic).toBe("food");
    expect(lm.requests.map((r) => r.decision)).toEqual(["default", "rule:Look for food words"]);
  });

  it("does not apply a rule whose phrase is only in the inputs or a demo, not in the instruction", async () => {
    const rule = { phrase: "look for food words", answer: () => ({ topic: "food" }) };
    const lm = new SimulatedLM({ rules: [rule] });
    const withDemo = new Predict(Topic, { demos: [new FewShotExample({ input: { text: "please look for food words" }, output: { topic: "music" }, id: "d9" })] });
    expect((await new Predict(Topic).call({ text: "look for food words in this" }, { lm })).topic).toBe("sport");
    expect((await withDemo.call({ text: "zzz" }, { lm })).topic).toBe("music");
    expect(lm.requests.map((r) => r.decision)).toEqual(["default", "demo:0"]);
  });

  it("ignores instruction and demos when prompt-blind", async () => {
    const lm = new SimulatedLM({ promptBlind: true, rules: [{ phrase: "topic", answer: () => ({ topic: "music" }) }] });
    const r = await new Predict(Topic, { demos }).call({ text: "the band played a loud song" }, { lm });
    expect(r.topic).toBe("sport");
  });

  it("writes well-formed TOON replies and reads TOON prompts", async () => {
    const lm = new SimulatedLM({ dataFormat: "toon", schemaFormat: "toon" });
    const p = new Predict(Topic, { demos });
    expect((await p.call({ text: "spicy noodles" }, { lm })).topic).toBe("food");
    expect(lm.requests[0]!.read.outputs).toEqual({ topic: { kind: "enum", values: ["sport", "food", "music"] } });
    const r = await new Predict(Topic).call({ text: "x" }, { lm });
    expect(r.topic).toBe("sport");
  });

  it("reads enum outputs from a BAML schema too", async () => {
    const lm = new SimulatedLM({ schemaFormat: "baml" });
    await new Predict(Topic).call({ text: "x" }, { lm });
    expect(lm.requests[0]!.read.outputs.topic).toEqual({ kind: "enum", values: ["sport", "food", "music"] });
  });

  it("sends a rule's string answer as the raw reply and estimates token usage from the text", async () => {
    const lm = new SimulatedLM({ rules: [{ phrase: "classify", answer: () => '{"topic": "music"}' }] });
    const { result, usage } = await withUsage(() => new Predict(Topic).call({ text: "abc" }, { lm }));
    expect(result.topic).toBe("music");
    const sent = lm.requests[0]!.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0);
    expect(usage).toMatchObject({ calls: 1, inputTokens: sent, outputTokens: Math.ceil('{"topic": "music"}'.length / 4) });
  });

  it("fills non-enum outputs with empty values when it has nothing to go on", async () => {
    class Answer extends Signature {
      static override description = "Answer.";
      static override input = { q: z.string() };
      static override output = { answer: z.string(), n: z.number(), ok: z.boolean(), tags: z.array(z.string()) };
    }
    const r = await new Predict(Answer).call({ q: "?" }, { lm: new SimulatedLM() });
    expect(r.toJSON()).toEqual({ answer: "", n: 0, ok: false, tags: [] });
  });
});
