// A display's HTML cuts a long cell (model or dataset text) with a visible "… (N more characters)"
// marker, so a 50 MB example no longer makes a 50 MB bundle; the examples themselves stay whole.
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, Predict, Signature } from "../../lib/index.js";
import { display } from "../../lib/notebook/index.js";
import { HTML_CELL_LIMIT } from "../../lib/notebook/html.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const more = (n: number) => `… (${n.toLocaleString("en-US")} more characters)`;

describe("long cells in HTML", () => {
  it("display.examples of a 5 MB example makes a small HTML part with the head of the text and a marker saying how much was cut", () => {
    const long = "a".repeat(5_000_000);
    const example = new FewShotExample({ input: { text: `START${long}END` }, output: { label: "x" }, id: "big" });
    const bundle = display.examples([example])!;
    const html = bundle["text/html"];
    expect(html.length).toBeLessThan(20_000);
    expect(html).toContain(`START${"a".repeat(100)}`);
    expect(html).not.toContain("END");
    expect(html).toContain(more(5_000_008 - HTML_CELL_LIMIT));
    // The example is untouched, and the short cells are as before.
    expect(example.input.text).toHaveLength(5_000_008);
    expect(html).toContain(">big<");
    expect(html).toContain(">x<");
    expect(bundle["text/plain"].length).toBeLessThan(1_000);
  });

  it("cuts before escaping, so no entity is split, and never between the two halves of a surrogate pair", () => {
    const angles = display.examples([new FewShotExample({ input: { text: "<".repeat(HTML_CELL_LIMIT + 10) }, output: { label: "x" } })])!["text/html"];
    expect(angles).toContain(`${"&lt;".repeat(HTML_CELL_LIMIT)}<span`);
    expect(angles).toContain(more(10));
    // One emoji is two UTF-16 units; a cut inside the pair would leave a lone surrogate.
    const emoji = display.examples([new FewShotExample({ input: { text: `a${"😀".repeat(HTML_CELL_LIMIT)}` }, output: { label: "x" } })])!["text/html"];
    expect(emoji).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(emoji).toMatch(/more characters\)/);
  });

  it("leaves a cell of exactly the limit whole", () => {
    const html = display.examples([new FewShotExample({ input: { text: "b".repeat(HTML_CELL_LIMIT) }, output: { label: "x" } })])!["text/html"];
    expect(html).toContain("b".repeat(HTML_CELL_LIMIT));
    expect(html).not.toContain("more characters");
  });

  it("display.prediction cuts a long model-written field the same way", async () => {
    const Sig = Signature.define({ name: "Write", description: "Write.", input: { topic: z.string() }, output: { essay: z.string() } });
    const p = await new Predict(Sig).call({ topic: "t" }, { lm: new ScriptedLM([{ essay: "e".repeat(1_000_000) }]) });
    const html = display.prediction(p)!["text/html"];
    expect(html.length).toBeLessThan(20_000);
    expect(html).toContain(more(1_000_000 - HTML_CELL_LIMIT));
  });

  it("display.trace cuts a long thought, observation and answer in HTML and keeps them whole in text/plain", () => {
    const result = {
      answer: "z".repeat(300_000),
      history: [{ step: 1, thought: "t".repeat(300_000), action: "lookup", toolInput: { word: "w".repeat(300_000) }, observation: "o".repeat(300_000) }],
    };
    const bundle = display.trace(result)!;
    const html = bundle["text/html"];
    expect(html.length).toBeLessThan(50_000);
    expect(html.match(/more characters\)/g)).toHaveLength(4);
    expect(html).toContain(more(300_000 - HTML_CELL_LIMIT));
    expect(bundle["text/plain"]).toContain("o".repeat(300_000));
  });
});
