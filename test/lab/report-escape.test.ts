import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import type { ModelChoice } from "../../lib/lab/experiment/model-choice.js";
import { renderReport } from "../../lib/lab/report/report-md.js";
import type { ReproduceResults } from "../../lib/lab/experiment/reproduce.js";

// Text a model or a dataset could write, each piece something a markdown renderer (CommonMark + GFM,
// as GitHub shows report.md) would otherwise turn into an image, a link, code, HTML or structure.
const IMAGE = "![x](https://attacker.example/p.png)";
const LINK = "[click me](https://attacker.example/a)";
const HOSTILE = [
  `Classify it. ${IMAGE} ${LINK}`,
  "<https://attacker.example/angle> and https://attacker.example/bare and www.attacker.example and snake_www.attacker.example and me@attacker.example",
  "```",
  "a `code span` and **bold** _em_ ~~strike~~ $x^2$ \\",
  "# a heading",
  "- a list item",
  "12. an ordered item",
  "    indented code",
  "---",
  "[ref]: https://attacker.example/ref",
  "<img src=x onerror=alert(1)> &lt; snake_case_word",
].join("\n");

function report(edit: (r: ReproduceResults) => void): string {
  const results = JSON.parse(readFileSync("reports/poem-sentiment/results.json", "utf8")) as ReproduceResults;
  edit(results);
  const model = { id: "openai/gpt-4o-mini", source: "--lm", standIn: false, description: "openai/gpt-4o-mini (from --lm, temperature 0)" } as ModelChoice;
  return renderReport({
    results, summary: "Sentiment of a verse (4 labels): a Predict program before and after MIPROv2 chose its instruction and demos.", models: [model], registered: true, bundledDataset: true,
    charts: { files: [{ file: "metrics.png", caption: "Test metrics" }], problems: [`candidates.png: ${HOSTILE}`] }, providerCalls: 0,
    cost: { baseline: 0, optimized: 0, optimizer: 0 },
  });
}

/** Indexes of `char` in `line` that no backslash escapes (an even run of backslashes before it). */
function unescaped(line: string, char: string): number[] {
  const found: number[] = [];
  for (let i = line.indexOf(char); i !== -1; i = line.indexOf(char, i + 1)) {
    let slashes = 0;
    while (i - slashes - 1 >= 0 && line[i - slashes - 1] === "\\") slashes++;
    if (slashes % 2 === 0) found.push(i);
  }
  return found;
}

/** The lines of `md` that carry model or dataset text (they hold the word "attacker" or "snake"). */
function hostileLines(md: string): string[] {
  return md.split("\n").filter((l) => /attacker|snake|heading|list item|ordered item|indented|code span|^> ?(---|```)|^> \\?-/.test(l));
}

/** Checks that nothing in `lines` can render as markup: what the escaping is for. */
function expectInert(lines: string[]): void {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    for (const char of ["[", "]", "`", "*", "~", "$"]) expect({ line, char, at: unescaped(line, char) }).toEqual({ line, char, at: [] });
    expect(line).not.toContain("<"); // no raw HTML or <autolink>
    expect(line).not.toMatch(/https?:\/\//); // no bare URL for GFM's autolinks
    expect(line).not.toMatch(/www\./i);
    expect(unescaped(line, "@")).toEqual([]); // no email autolink
    expect(unescaped(line, "_").filter((i) => !/[\p{L}\p{N}]/u.test(line[i - 1] ?? "") || !/[\p{L}\p{N}]/u.test(line[i + 1] ?? ""))).toEqual([]);
  }
}

describe("report.md escapes model- and dataset-written text", () => {
  it("an instruction cannot make an image, a link, a code span or a block: each line of the quote is inert text", () => {
    const md = report((r) => { r.program.self!.instruction = HOSTILE; });
    const quote = md.split("\n").filter((l) => l.startsWith(">"));
    expect(quote).toHaveLength(HOSTILE.split("\n").length);
    expectInert(quote);
    expect(quote[0]).toBe("> Classify it. !\\[x\\](https\\://attacker.example/p.png) \\[click me\\](https\\://attacker.example/a)");
    expect(quote[2]).toBe("> \\`\\`\\`");
    expect(quote[3]).toBe("> a \\`code span\\` and \\*\\*bold\\*\\* \\_em\\_ \\~\\~strike\\~\\~ \\$x^2\\$ \\\\");
    // Block syntax at the start of a line is escaped; indentation cannot start a code block.
    expect(quote.slice(4, 9)).toEqual(["> \\# a heading", "> \\- a list item", "> 12\\. an ordered item", "> &#32;   indented code", "> \\---"]);
    expect(quote[10]).toBe("> &lt;img src=x onerror=alert(1)&gt; &amp;lt; snake_case_word");
  });

  it("demo values and ids stay inside their cells: one row a demo, newlines (LF, CR, CRLF) and pipes kept out", () => {
    const md = report((r) => {
      r.program.self!.demos = [{ id: `train-1 ${LINK}`, input: { verse: `${HOSTILE}\r\nsecond\rthird | cell` }, output: { label: IMAGE } }];
    });
    const rows = md.split("\n").filter((l) => l.startsWith("| train-1"));
    expect(rows).toHaveLength(1);
    expect(unescaped(rows[0]!, "|")).toHaveLength(4); // three cells
    expectInert(rows);
    expect(rows[0]).toContain(" second third \\| cell |");
    expect(rows[0]).toContain("| label: !\\[x\\](https\\://attacker.example/p.png) |");
  });

  it("labels in the confusion matrix, a trial's error and a chart problem are escaped too", () => {
    const md = report((r) => {
      const label = `neg ${IMAGE}`;
      r.baseline.confusion!.labels[0] = label;
      r.baseline.perLabel = { [label]: r.baseline.perLabel!.negative!, ...r.baseline.perLabel };
      r.optimizer!.trials[0]!.error = HOSTILE;
    });
    const lines = hostileLines(md);
    expectInert(lines);
    const header = md.split("\n").find((l) => l.startsWith("| expected \\ predicted"))!;
    expect(header).toContain("| neg !\\[x\\](https\\://attacker.example/p.png) |");
    const matrixRow = md.split("\n").find((l) => l.startsWith("| neg !"))!;
    expect(unescaped(matrixRow, "|")).toHaveLength(unescaped(header, "|").length);
    expect(md).toContain("Not drawn: candidates.png: Classify it. !\\[x\\]");
    // The report's own markup still works.
    expect(md).toContain("![Test metrics](metrics.png)");
  });

  it("leaves ordinary text as it was: words with underscores, colons, parentheses, hyphens and full stops", () => {
    const md = report((r) => {
      r.program.self!.instruction = "Classify the intent (e.g. get_disposable_virtual_card): one label - no more.";
      r.program.self!.demos = [{ id: "train-7", input: { text: "Is this the Faanoos restaurant? At 7:30, 2-3 people." }, output: { intent: "fiat_currency_support" } }];
    });
    expect(md).toContain("> Classify the intent (e.g. get_disposable_virtual_card): one label - no more.");
    expect(md).toContain("| train-7 | text: Is this the Faanoos restaurant? At 7:30, 2-3 people. | intent: fiat_currency_support |");
  });
});
