/**
 * Values as fields, in Chromium, on the lab file and on PostgreSQL: a row's inputs, expected values,
 * prediction and scores are `name: value` lines (nested objects indented, arrays as items, long text
 * folded), never JSON with braces; a model's structured reply too, its raw text a click away. A row
 * that failed or scored below full carries `data-failed` and looks different. Stored text stays text.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Page } from "puppeteer-core";
import type { Viewer } from "../../lib/view/server.js";
import { browseFixture, browserTestsRun } from "./browser.js";
import { viewerEngines, type Engine, type Fixture } from "./fixture.js";
import { addJudgedRuns, LONG, RATIONALE_WORD, REPLY, type JudgedRuns } from "./judged-fixture.js";

/** The page's globals, in the functions run in the browser (the project compiles without the DOM library). */
declare const window: any, document: any;

const run = browserTestsRun();
const maybe = run ? describe : describe.skip;

const engines: Engine[] = run ? viewerEngines() : ["sqlite"];
for (const engine of engines) maybe(`values as fields, failed rows marked, in Chromium (${engine})`, () => {
  const runs: Partial<JudgedRuns> = {};
  let fixture: Fixture;
  let viewer: Viewer;
  let page: Page;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ fixture, viewer, page, close } = await browseFixture(engine, undefined, addJudgedRuns(runs)));
  }, 120000);

  afterAll(async () => {
    await close?.();
  }, 60000);

  async function open(path: string): Promise<void> {
    const response = await page.goto(viewer.url + path, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    // Nothing stored ran or became an element: at most the page's own script.
    const state = await page.evaluate(() => ({
      pwned: window.__pwned, scripts: document.querySelectorAll("script").length, images: document.querySelectorAll("img").length,
    }));
    expect(state).toEqual({ pwned: undefined, scripts: state.scripts <= 1 ? state.scripts : -1, images: 0 });
  }

  const cell = (id: string, column: number, selector = "") => `tr[data-example-id="${id}"] td:nth-child(${column}) ${selector}`;
  const texts = (selector: string) => page.$$eval(selector, (found) => found.map((e) => e.innerText));

  it("a row's values are fields: name: value, nested objects indented, arrays as items, no braces", async () => {
    await open(`runs/${runs.source}`);
    expect(await texts(cell("q-0", 3, '> .fields > .field[data-field="question"]'))).toEqual(["question: What is 2+2?"]);
    expect(await texts(cell("q-0", 3, '.field[data-field="context"] .field[data-field="tags"] ol.items > li'))).toEqual(["math", "easy"]);
    expect(await texts(cell("q-0", 5, '.field[data-field="answer"]'))).toEqual(["answer: 4"]);
    expect(await texts(cell("q-0", 6, '.field[data-field="accuracy"]'))).toEqual(["accuracy: 1.000"]);
    // The nested object's fields sit to the right of their parent's name.
    const [outer, inner] = await page.$$eval(cell("q-0", 3, '.field[data-field="context"] > .name, ') + cell("q-0", 3, '.field[data-field="source"] > .name'),
      (names) => names.map((n) => n.getBoundingClientRect().left));
    expect(inner! - outer!).toBeGreaterThanOrEqual(10);
    const table = await page.$eval("#rows tbody", (body) => body.innerText);
    expect(table).not.toMatch(/[{}]/);
    expect(table).not.toContain('"answer"');
  });

  it("a long text is folded after 400 characters: its start shown, the rest (hostile text included) a click away, as text", async () => {
    await open(`runs/${runs.source}`);
    const passage = cell("q-3", 3, '.field[data-field="passage"]');
    expect(await page.$eval(`${passage} details.fold`, (d) => d.open)).toBe(false);
    const folded = await page.$eval(passage, (e) => e.innerText);
    expect(folded).toBe(`passage: ${LONG.slice(0, 400)}… (${LONG.length} characters: open for all)`);
    await page.click(`${passage} details.fold > summary`);
    const opened = await page.$eval(passage, (e) => e.innerText);
    expect(opened).toContain(LONG);
    expect(await page.evaluate(() => [window.__pwned === undefined, document.querySelectorAll("script").length])).toEqual([true, 1]);
  });

  it("failed and wrong rows carry data-failed and are coloured apart; right rows are not", async () => {
    await open(`runs/${runs.source}`);
    const marks = await page.$$eval("tr[data-example-id]", (rows) => rows.map((r) => [r.getAttribute("data-example-id"), r.getAttribute("data-failed")]));
    expect(marks).toEqual([["q-0", null], ["q-1", "wrong"], ["q-2", "error"], ["q-3", null]]);
    const background = (id: string) => page.$eval(`tr[data-example-id="${id}"] td:nth-child(2)`, (td) => window.getComputedStyle(td).backgroundColor);
    const [right, wrong, failed] = [await background("q-0"), await background("q-1"), await background("q-2")];
    expect(new Set([right, wrong, failed]).size).toBe(3);
    // The fixture's first evaluation: example 7 failed, every i % 4 = 1 scored 0 (the first page: 0 to 49).
    await open(`runs/${fixture.evalA}`);
    const marked = await page.$$eval("tr[data-failed]", (rows) => rows.map((r) => [r.getAttribute("data-example-id"), r.getAttribute("data-failed")]));
    const expected = Array.from({ length: 50 }, (_, i) => i).filter((i) => i === 7 || i % 4 === 1).map((i) => [`ex-${i}`, i === 7 ? "error" : "wrong"]);
    expect(marked).toEqual(expected);
  });

  it("one example's page: values as fields, a structured reply as fields with its raw text folded, a rationale", async () => {
    await open(`runs/${runs.source}/rows/0`);
    expect(await texts('#inputs > .fields > .field[data-field="question"]')).toEqual(["question: What is 2+2?"]);
    expect(await page.$eval("#inputs", (e) => e.innerText)).not.toMatch(/[{}]/);
    expect(await texts('[data-call] .reply-fields .field[data-field="reasoning"] .field[data-field="steps"] li')).toEqual(REPLY.reasoning.steps);
    expect(await page.$eval("[data-call] details.raw .reply", (e) => e.textContent)).toBe(JSON.stringify(REPLY));
    expect(await page.$eval("[data-call] details.raw", (d) => d.open)).toBe(false);
    await open(`runs/${runs.rescored}/rows/1`);
    expect(await page.$eval('[data-rationale="judge"]', (e) => e.innerText)).toBe(`${RATIONALE_WORD} rule: 2+2 is not 5.`);
  });
});
