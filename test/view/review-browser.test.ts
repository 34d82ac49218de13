/**
 * The review queue in a real browser (Debian's Chromium through puppeteer-core): a person opens the
 * address `typelm view --review` printed, reviews three rows from the keyboard alone (pass; fail with
 * a corrected expected output; a score with a note holding markup), and each review is in the lab
 * store; the note and a row's hostile input are shown as text, the page's script runs under the
 * viewer's Content-Security-Policy, and the token leaves the address bar.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Browser, Page } from "puppeteer-core";
import { listAnnotations } from "../../lib/store/annotations/annotations.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { browserTestsRun, collectPageErrors, launch } from "./browser.js";
import { HOSTILE_INPUT, reviewLabFile } from "./review-fixture.js";

/** The page's globals, in the functions run in the browser (the project compiles without the DOM library). */
declare const document: any;
declare const window: any;
declare const location: any;

const run = browserTestsRun();
const maybe = run ? describe : describe.skip;
const NOTE = `<script>window.__pwned = 9</script> check the <b>units</b>`;

maybe("the review queue in Chromium", () => {
  let lab: ReturnType<typeof reviewLabFile>;
  let viewer: Viewer;
  let browser: Browser;
  let page: Page;
  let closeBrowser: () => Promise<void>;
  const errors: string[] = [];

  beforeAll(async () => {
    lab = reviewLabFile();
    viewer = await startViewer({ store: lab.path, port: 0, review: true, reviewer: "ann" });
    ({ browser, close: closeBrowser } = await launch());
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    collectPageErrors(page, errors);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await viewer?.close();
  }, 30_000);

  const reviewed = (id: string) => page.$eval(`tr[data-example-id="${id}"]`, (r) => r.getAttribute("data-reviewed"));
  const waitReviewed = (id: string, verdict: string) =>
    page.waitForFunction((i: string, v: string) => document.querySelector(`tr[data-example-id="${i}"]`)?.getAttribute("data-reviewed") === v, { timeout: 30_000 }, id, verdict);

  it("reviews three rows from the keyboard, and each review is stored", async () => {
    await page.goto(viewer.reviewUrl!, { waitUntil: "load" });
    // The token moved into the tab's storage and out of the address bar.
    expect(await page.evaluate(() => location.hash)).toBe("");
    expect(await page.$$eval("tr[data-review-row]", (rows) => rows.map((r) => r.getAttribute("data-example-id")))).toEqual(["q-0", "q-1", "q-2", "q-3", "q-0"]);
    expect(await page.$eval("tr[data-review-row].current", (r) => r.getAttribute("data-example-id"))).toBe("q-0");

    // Row 1: pass.
    await page.keyboard.press("p");
    await page.keyboard.press("Enter");
    await waitReviewed("q-0", "pass");
    // Row 2 (the queue moved on): fail, with the expected output corrected.
    await page.keyboard.press("f");
    await page.keyboard.press("e");
    expect(await page.evaluate(() => document.activeElement.hasAttribute("data-expected-edit"))).toBe(true);
    await page.evaluate(() => { document.activeElement.value = ""; });
    await page.keyboard.type(`{"answer": "answer one, corrected"}`);
    await page.keyboard.press("Enter");
    await waitReviewed("q-1", "fail");
    // Row 3: k back and j forward, then a score of 4 with a note holding markup.
    await page.keyboard.press("k");
    await page.keyboard.press("j");
    await page.keyboard.press("4");
    await page.keyboard.press("n");
    await page.keyboard.type(NOTE);
    await page.keyboard.press("Enter");
    await waitReviewed("q-2", "4");
    expect(await reviewed("q-3")).toBeNull();

    const stored = await listAnnotations(LabStore.open(lab.path), lab.ids.judged, { all: true });
    expect(stored.map((a) => [a.exampleId, a.verdict, a.expected, a.note, a.reviewer])).toEqual([
      ["q-0", "pass", null, null, "ann"],
      ["q-1", "fail", { answer: "answer one, corrected" }, null, "ann"],
      ["q-2", 4, null, NOTE, "ann"],
    ]);
    // The corrected output replaced the shown one.
    expect(await page.$eval(`tr[data-example-id="q-1"] [data-expected-shown]`, (e) => e.textContent)).toContain("answer one, corrected");
    expect(errors).toEqual([]);
  }, 120_000);

  it("shows the note and a hostile input as text, after a reload too, and runs none of it", async () => {
    const noteOf = () => page.$eval(`tr[data-example-id="q-2"] [data-note]`, (e) => [e.textContent, e.children.length]);
    expect(await noteOf()).toEqual([NOTE, 0]);
    await page.goto(`${viewer.url}review?order=index`, { waitUntil: "load" });
    expect(await noteOf()).toEqual([NOTE, 0]);
    expect(await page.$eval(`tr[data-run-id="${lab.ids.judged}"][data-example-id="q-0"] [data-field="question"]`, (e) => e.textContent)).toContain(HOSTILE_INPUT);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    // The token stayed in the tab: a review after the reload is taken.
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("p");
    await page.keyboard.press("Enter");
    await waitReviewed("q-3", "pass");
    expect(await page.$eval("#review-status", (e) => e.textContent)).toBe("Saved q-3: pass.");
    expect(errors).toEqual([]);
  }, 120_000);

  it("filters by a judge's score: at most 0 leaves the rows the judge failed", async () => {
    await page.goto(`${viewer.url}review?metric=correct&max=0&run=${lab.ids.judged}`, { waitUntil: "load" });
    expect(await page.$$eval("tr[data-review-row]", (rows) => rows.map((r) => r.getAttribute("data-example-id")))).toEqual(["q-1", "q-3"]);
    expect(errors).toEqual([]);
  }, 60_000);
});
