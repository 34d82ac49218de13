import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, Prompt, Signature, t } from "../../lib/index.js";

enum Level { Low, High }

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of a sentence.",
  input: { sentence: z.string().describe("text to classify") },
  output: { sentiment: z.enum(["positive", "negative", "neutral"]), confidence: z.number().default(1) },
});

describe("Prompt", () => {
  it("renders BAML schemas when schemaFormat is baml", () => {
    const system = Prompt.fromSignature(Classify, { schemaFormat: "baml" }).system();
    expect(system).toContain("class ClassifyOutput {");
    expect(system).toContain('sentiment "positive" | "negative" | "neutral"');
    expect(system).toContain("class ClassifyInput {");
    expect(system).not.toContain('"$schema"');
  });

  it("renders the TOON field summary when schemaFormat is toon", () => {
    const system = Prompt.fromSignature(Classify, { schemaFormat: "toon" }).system();
    expect(system).toContain("confidence?: number");
    expect(system).not.toContain("```json\n{");
  });

  it("renders JSON Schema by default, without the $schema noise", () => {
    const system = Prompt.fromSignature(Classify).system();
    expect(system).toContain('"required":["sentiment"]');
    expect(system).not.toContain("draft-06");
  });

  it("puts only input values in the user message", () => {
    const prompt = Prompt.fromSignature(Classify);
    expect(prompt.user({ sentence: "hi" })).toBe('## Input values\n```json\n{"sentence":"hi"}\n```');
  });

  it("writes dates in demos and inputs in their ISO wire form", () => {
    const Dated = Signature.define({ name: "Dated", input: { day: t.date() }, output: { weekday: z.string() } });
    const demo = new FewShotExample({ input: { day: "2024-02-29" }, output: { weekday: "Thursday" } });
    const prompt = Prompt.fromSignature(Dated, { demos: [demo] });
    expect(prompt.system()).toContain('{"day":"2024-02-29"}');
  });

  it("shows TOON placeholders for ints, numeric enums and dates in the output template", () => {
    const S = Signature.define({
      name: "S",
      output: { n: z.number().int(), level: z.enum(Level), due: t.date(), note: z.string().nullable() },
    });
    const system = Prompt.fromSignature(S, { dataFormat: "toon" }).system();
    expect(system).toContain("n: <integer>");
    expect(system).toContain("level: <0|1>");
    expect(system).toContain("due: <YYYY-MM-DD>");
    expect(system).toContain("note: <string or null>");
  });

  it("shows list form, like the TOON field summary, for arrays of objects that are not flat", () => {
    const S = Signature.define({
      name: "Order",
      output: { items: z.array(z.object({ name: z.string(), tags: z.array(z.string()) })), rows: z.array(z.object({ a: z.number() })) },
    });
    const system = Prompt.fromSignature(S, { dataFormat: "toon" }).system();
    expect(system).toContain("items[N]:\n  - name: <string>\n    tags[N]: <string>,...\n");
    expect(system).toContain("rows[N]{a}:\n  <number>\n");
  });

  it("stops at a recursive struct in the TOON output template with a reference to its fields", () => {
    type Category = { name: string; parent: Category | null };
    const Category: z.ZodType<Category> = z.lazy(() => z.object({ name: z.string(), parent: Category.nullable() }));
    const Node = z.object({
      label: z.string(),
      get next() {
        return Node.optional();
      },
    });
    const S = Signature.define({ name: "Tree", output: { category: Category, head: Node } });
    const system = Prompt.fromSignature(S, { dataFormat: "toon" }).system();
    expect(system).toContain('category:\n  name: <string>\n  parent: <same fields as "category" or null>\n');
    expect(system).toContain('head:\n  label: <string>\n  next: <same fields as "head" or null>\n');
  });
});
