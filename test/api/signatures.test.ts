/** API.md "Signatures and field types" — imports by package name (resolved to dist/, see package.test.ts). */
import { describe, expect, test } from "@jest/globals";
import { z } from "zod";
import { ChainOfThought, Predict, Signature, Temporal, ValidationError, t } from "typelm";
import { ScriptedLM } from "typelm/testing";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string().describe("text to classify") };
  static override output = {
    sentiment: z.enum(["positive", "negative", "neutral"]),
    confidence: z.number().default(1.0),
  };
}

enum Color { Red = "red", Green = "green" }

class AllTypes extends Signature {
  static override description = "Every field type.";
  static override input = { q: z.string() };
  static override output = {
    s: z.string().describe("a string"),
    i: z.number().int(),
    f: z.number(),
    b: z.boolean(),
    d: t.date(),
    dt: t.dateTime(),
    at: z.date(),
    opt: z.string().nullable(),
    list: z.array(z.string()),
    rec: z.record(z.string(), z.number()),
    u: z.union([z.object({ kind: z.literal("a"), x: z.number() }), z.object({ kind: z.literal("b"), y: z.string() })]),
    e: z.enum(Color),
    st: z.object({ inner: z.object({ n: z.number() }) }),
    def: z.string().default("dflt"),
  };
}

describe("Signature classes", () => {
  test("inputJsonSchema: draft-06, object, properties in order with descriptions, required", () => {
    const s = Classify.inputJsonSchema() as Record<string, any>;
    expect(s.$schema).toBe("http://json-schema.org/draft-06/schema#");
    expect(s.type).toBe("object");
    expect(Object.keys(s.properties)).toEqual(["sentence"]);
    expect(s.properties.sentence).toMatchObject({ type: "string", description: "text to classify" });
    expect(s.required).toEqual(["sentence"]);
  });

  test("outputJsonSchema: enum, number; a defaulted field is not required", () => {
    const s = Classify.outputJsonSchema() as Record<string, any>;
    expect(s.$schema).toBe("http://json-schema.org/draft-06/schema#");
    expect(Object.keys(s.properties)).toEqual(["sentiment", "confidence"]);
    expect(s.properties.sentiment).toMatchObject({ type: "string", enum: ["positive", "negative", "neutral"] });
    expect(s.properties.confidence.type).toBe("number");
    expect(s.required ?? []).toEqual(["sentiment"]);
  });

  test("field types map to the JSON Schema API.md states", () => {
    const s = AllTypes.outputJsonSchema() as Record<string, any>;
    const p = s.properties;
    expect(Object.keys(p)).toEqual(["s", "i", "f", "b", "d", "dt", "at", "opt", "list", "rec", "u", "e", "st", "def"]);
    expect(p.s).toMatchObject({ type: "string", description: "a string" });
    expect(p.i.type).toBe("integer");
    expect(p.f.type).toBe("number");
    expect(p.b.type).toBe("boolean");
    expect(p.d).toMatchObject({ type: "string", format: "date" });
    expect(p.dt).toMatchObject({ type: "string", format: "date-time" });
    expect(p.at).toMatchObject({ type: "string", format: "date-time" });
    expect(p.opt.type ?? p.opt.anyOf).toEqual(["string", "null"]);
    expect(p.list).toMatchObject({ type: "array", items: { type: "string" } });
    expect(p.rec.additionalProperties).toMatchObject({ type: "number" });
    expect(Array.isArray(p.u.anyOf)).toBe(true);
    expect(p.u.anyOf).toHaveLength(2);
    expect(p.e).toMatchObject({ type: "string", enum: ["red", "green"] });
    expect(p.st.type).toBe("object");
    expect(p.st.properties.inner.properties.n.type).toBe("number");
    expect(s.required).not.toContain("opt");
    expect(s.required).not.toContain("def");
    expect(s.required).toContain("s");
  });

  test("nullable complex type is anyOf with null", () => {
    const Sig = Signature.define({ name: "N", description: "n", input: { q: z.string() }, output: { o: z.object({ a: z.string() }).nullable() } });
    const p = (Sig.outputJsonSchema() as any).properties.o;
    expect(p.anyOf).toEqual(expect.arrayContaining([{ type: "null" }]));
  });

  test("recursive types use $ref into $defs present in the same document", () => {
    const Node: z.ZodType<any> = z.lazy(() => z.object({ name: z.string(), children: z.array(Node) }));
    const Tree = Signature.define({ name: "Tree", description: "t", input: { q: z.string() }, output: { root: Node } });
    const s = Tree.outputJsonSchema() as Record<string, any>;
    const text = JSON.stringify(s);
    const refs = [...text.matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const name of refs) expect(s.$defs?.[name]).toBeDefined();
  });

  test("Signature.define returns an equivalent class; output-only signatures are allowed", async () => {
    const Summ = Signature.define({ name: "Summarize", description: "Summarize.", input: { text: z.string() }, output: { summary: z.string() } });
    expect(Object.keys((Summ.outputJsonSchema() as any).properties)).toEqual(["summary"]);
    const lm = new ScriptedLM([{ summary: "short" }]);
    const r = await new Predict(Summ).call({ text: "long text" }, { lm });
    expect(r.summary).toBe("short");
    class Joke extends Signature {
      static override description = "Tell a joke.";
      static override output = { joke: z.string() };
    }
    const j = await new Predict(Joke).call({}, { lm: new ScriptedLM([{ joke: "knock knock" }]) });
    expect(j.joke).toBe("knock knock");
  });
});

describe("conversion of values", () => {
  test("dates: t.date → PlainDate, t.dateTime keeps its offset, z.date → Date in UTC", async () => {
    const lm = new ScriptedLM([{
      s: "x", i: 3, f: 1.5, b: true, d: "2024-02-29", dt: "2024-03-01T10:00:00+02:00", at: "2024-03-01T10:00:00+02:00",
      opt: null, list: ["a"], rec: { k: 1 }, u: { kind: "b", y: "why" }, e: "green", st: { inner: { n: 2 } },
    }]);
    const r = await new Predict(AllTypes).call({ q: "q" }, { lm });
    expect(r.d).toBeInstanceOf(Temporal.PlainDate);
    expect(r.d.toString()).toBe("2024-02-29");
    expect(r.dt).toBeInstanceOf(Temporal.ZonedDateTime);
    expect(r.dt.offset).toBe("+02:00");
    expect(r.dt.hour).toBe(10);
    expect(r.at).toBeInstanceOf(Date);
    expect(r.at.toISOString()).toBe("2024-03-01T08:00:00.000Z");
    expect(r.u).toEqual({ kind: "b", y: "why" });
    expect(r.e).toBe(Color.Green);
    expect(r.st).toEqual({ inner: { n: 2 } });
    expect(r.def).toBe("dflt");
    expect(r.i).toBe(3);
  });

  test("output defaults apply when the reply omits the field and never raise", async () => {
    const r = await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "negative" }]) });
    expect(r.confidence).toBe(1.0);
    expect(r.sentiment).toBe("negative");
  });

  test("date inputs may be ISO strings and are converted; input defaults apply", async () => {
    class When extends Signature {
      static override description = "Day of week.";
      static override input = { day: t.date(), at: z.date(), tone: z.string().default("plain") };
      static override output = { weekday: z.string() };
    }
    const lm = new ScriptedLM([{ weekday: "Thursday" }]);
    await new Predict(When).call({ day: "2024-02-29" as any, at: "2024-02-29T12:00:00Z" as any }, { lm });
    const req = lm.requests[0]!;
    expect(req.inputs!.day).toBeInstanceOf(Temporal.PlainDate);
    expect(String(req.inputs!.day)).toBe("2024-02-29");
    expect(req.inputs!.at).toBeInstanceOf(Date);
    expect(req.inputs!.tone).toBe("plain");
    expect(req.messages.map((m) => m.content).join("\n")).toContain("2024-02-29");
  });

  test("ChainOfThought adds reasoning; a signature declaring its own reasoning is a ValidationError", async () => {
    const r = await new ChainOfThought(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ reasoning: "because", sentiment: "neutral" }]) });
    expect(r.reasoning).toBe("because");
    expect(r.sentiment).toBe("neutral");
    const Bad = Signature.define({ name: "Bad", description: "b", input: { q: z.string() }, output: { reasoning: z.string(), a: z.string() } });
    expect(() => new ChainOfThought(Bad)).toThrow(ValidationError);
  });
});
