/**
 * The matrix in a real browser (Debian's Chromium through puppeteer-core), on the file and on the same
 * lab in PostgreSQL: on the runs page a person ticks three runs and follows the compare link to their
 * matrix (two ticked: to their comparison), sees one row per example with the disagreeing ones marked,
 * narrows to them with the filter, and opens the pairwise tests. The page's script runs under the
 * viewer's Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Browser, Page } from "puppeteer-core";
import { closeStoreSync } from "../../lib/store/db.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { browserTestsRun, collectPageErrors, launch } from "./browser.js";
import { removeFixtures, viewerEngines, type Engine } from "./fixture.js";
import { disagreeing, EXAMPLES, matrixFixture, type MatrixFixture } from "./matrix-fixture.js";

/** The page's globals, in the functions run in the browser (the project compiles without the DOM library). */
declare const document: any;

const run = browserTestsRun();
const maybe = run ? describe : describe.skip;
const engines: Engine[] = run ? viewerEngines() : ["sqlite"];

for (const engine of engines) maybe(`the matrix in Chromium (${engine})`, () => {
  let m: MatrixFixture;
  let viewer: Viewer;
  let browser: Browser;
  let page: Page;
  let closeBrowser: () => Promise<void>;
  const errors: string[] = [];

  beforeAll(async () => {
    m = await matrixFixture(engine);
    viewer = await startViewer({ store: m.location, port: 0 });
    ({ browser, close: closeBrowser } = await launch());
    page = await browser.newPage();
    collectPageErrors(page, errors);
  }, 60000);

  afterAll(async () => {
    await closeBrowser?.();
    await viewer?.close();
    await m?.stop();
    if (m !== undefined) closeStoreSync(m.fixture.path);
    removeFixtures();
  }, 30000);

  const shownRows = () => page.$$eval("#matrix tbody tr", (rows) => rows.map((r) => [r.getAttribute("data-example-id"), r.hasAttribute("data-disagree")] as [string, boolean]));

  it("three runs ticked on the runs page open their matrix: a row per example, the disagreeing ones marked", async () => {
    await page.goto(viewer.url, { waitUntil: "load" });
    expect(await page.$$eval("input[data-select-run]", (boxes) => boxes.length)).toBeGreaterThanOrEqual(m.runs.length + 1);
    // Ticked newest first; the matrix lists them oldest first.
    for (const id of [...m.runs].reverse()) await page.click(`input[data-select-run="${id}"]`);
    expect(await page.$eval("a[data-compare]", (a) => a.textContent)).toBe("compare the 3 picked runs side by side");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("a[data-compare]")]);
    const url = new URL(page.url());
    expect(url.pathname).toBe("/matrix");
    expect(url.searchParams.get("runs")).toBe(m.runs.join(","));
    expect(await page.$$eval("#matrix thead a[data-run-id]", (links) => links.map((a) => a.getAttribute("data-run-id")))).toEqual(m.runs);
    const rows = await shownRows();
    expect(rows.map(([id]) => id)).toEqual(Array.from({ length: EXAMPLES }, (_, i) => `ex-${i}`));
    expect(rows.filter(([, marked]) => marked).map(([id]) => id)).toEqual(disagreeing().map((i) => `ex-${i}`));
    // A marked row looks different from an unmarked one.
    const background = (id: string) => page.$eval(`tr[data-example-id="${id}"] td`, (td) => document.defaultView.getComputedStyle(td).backgroundColor);
    expect(await background(`ex-${disagreeing()[0]}`)).not.toBe(await background("ex-1"));
    expect(errors).toEqual([]);
  });

  it("the filter narrows the matrix to the examples where the runs differ", async () => {
    await page.click('input[name="disagree"]');
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("form.filters button[type=submit]")]);
    expect(new URL(page.url()).searchParams.get("disagree")).toBe("1");
    const rows = await shownRows();
    expect(rows.map(([id]) => id)).toEqual(disagreeing().map((i) => `ex-${i}`));
    expect(rows.every(([, marked]) => marked)).toBe(true);
    expect(await page.$eval("#disagree-count b", (b) => b.textContent)).toBe(String(disagreeing().length));
  });

  it("the pairwise tests are a click away", async () => {
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("a[data-tests]")]);
    expect(new URL(page.url()).pathname).toBe("/matrix/tests");
    expect(await page.$$eval("#pair-tests tr[data-pair]", (rows) => rows.map((r) => r.getAttribute("data-pair")))).toEqual(["AB", "AC", "BC"]);
    expect(await page.$$eval("#pair-tests [data-p-holm]", (cells) => cells.length)).toBe(3);
  });

  it("two runs ticked open their comparison", async () => {
    await page.goto(viewer.url, { waitUntil: "load" });
    await page.click(`input[data-select-run="${m.runs[2]}"]`);
    await page.click(`input[data-select-run="${m.runs[0]}"]`);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("a[data-compare]")]);
    expect(new URL(page.url()).pathname).toBe(`/compare/${m.runs[0]}/${m.runs[2]}`);
    expect(await page.$eval("#comparison", (t) => t !== null)).toBe(true);
    expect(errors).toEqual([]);
  });
});
