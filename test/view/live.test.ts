/**
 * A running evaluation's page shows the rows written after it loaded, in index order, within 2 s and
 * without a reload; the status follows when the run ends. On the lab file and on a team's lab in
 * PostgreSQL (written there by another process's store, as an evaluation writes it).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Page } from "puppeteer-core";
import { showRun } from "../../lib/lab/cli/show.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { browseFixture, browserTestsRun } from "./browser.js";
import { HOSTILE, openWriter, row, viewerEngines, type Engine, type Fixture } from "./fixture.js";

/** The page's globals, in the functions run in the browser (the project compiles without the DOM library). */
declare const window: any, document: any;

const run = browserTestsRun();
const maybe = run ? describe : describe.skip;
const engines: Engine[] = run ? viewerEngines() : ["sqlite"];

for (const engine of engines) maybe(`live update of a running run (${engine})`, () => {
  let fixture: Fixture;
  let location: string;
  let viewer: Viewer;
  let page: Page;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ fixture, location, viewer, page, close } = await browseFixture(engine));
  }, 60000);

  afterAll(async () => {
    await close?.();
  }, 30000);

  const ids = () => page.$$eval("tr[data-example-id]", (rows) => rows.map((r) => r.getAttribute("data-example-id")));

  it("new rows appear within 2 s of being written, in index order, without a reload", async () => {
    await page.goto(`${viewer.url}runs/${fixture.running}`, { waitUntil: "load" });
    expect(await ids()).toEqual(["ex-0", "ex-1", "ex-2"]);
    // Marks this document: a reload would drop the mark.
    await page.evaluate(() => { window.__same = true; });
    const writer = openWriter(engine, location);
    const written = Date.now();
    // Rows finish out of order under concurrency: 5 before 3 and 4.
    writer.recordExample(fixture.running, row(5, { inputs: { sentence: HOSTILE[1]! } }));
    writer.recordExample(fixture.running, row(3, { prediction: { sentiment: "wrong" }, scores: { accuracy: 0 } }));
    writer.recordExample(fixture.running, row(4, { error: "ProviderError: 503", prediction: null, scores: { accuracy: 0 } }));
    await writer.flush();
    await page.waitForFunction(() => document.querySelectorAll("tr[data-example-id]").length === 6, { timeout: 2000, polling: 50 });
    expect(Date.now() - written).toBeLessThan(2000);
    expect(await ids()).toEqual(["ex-0", "ex-1", "ex-2", "ex-3", "ex-4", "ex-5"]);
    expect(await page.$eval("#row-count", (e) => e.textContent)).toBe("6");
    expect(await page.$eval("#failed-count", (e) => e.textContent)).toBe("1");
    expect(await page.$eval('tr[data-example-id="ex-4"]', (e) => e.className)).toBe("failed");
    // The added rows are marked as the server marks them: ex-3 scored 0 (wrong), ex-4 failed.
    expect(await page.$$eval("tr[data-example-id]", (rows) => rows.map((r) => r.getAttribute("data-failed")))).toEqual([null, null, null, "wrong", "error", null]);
    // The hostile input arrived through JSON and went in as text, as a field.
    expect(await page.$eval('tr[data-example-id="ex-5"] td:nth-child(3) .field[data-field="sentence"]', (e) => e.innerText)).toBe(`sentence: ${HOSTILE[1]}`);
    const state = await page.evaluate(() => ({
      same: window.__same, pwned: window.__pwned,
      images: document.querySelectorAll("img").length,
    }));
    expect(state).toEqual({ same: true, pwned: undefined, images: 0 });

    writer.finishRun(fixture.running, { status: "completed", score: 1, summary: {} });
    await writer.flush();
    await page.waitForFunction(() => document.getElementById("run-status")?.textContent === "completed", { timeout: 2000, polling: 50 });
  }, 20000);

  it("a filtered page receives only the new rows that match its filter", async () => {
    const lab = openWriter(engine, location);
    const id = lab.startRun({ kind: "evaluation", name: "filtered", config: { metrics: ["accuracy"] } });
    lab.recordExample(id, row(0));
    await lab.flush();
    await page.goto(`${viewer.url}runs/${id}?failed=1`, { waitUntil: "load" });
    expect(await ids()).toEqual([]);
    lab.recordExample(id, row(1));
    lab.recordExample(id, row(2, { error: "TimeoutError: 30 s", prediction: null, scores: { accuracy: 0 } }));
    await lab.flush();
    await page.waitForFunction(() => document.querySelectorAll("tr[data-example-id]").length === 1, { timeout: 30_000, polling: 50 });
    // One more poll round: the row that did not fail must not arrive later either.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await ids()).toEqual(["ex-2"]);
    expect(await page.$eval("#row-count", (e) => e.textContent)).toBe("3");
    lab.finishRun(id, { status: "completed", score: 0.5, summary: {} });
    await lab.flush();
  }, 90_000);

  it("a large run's bootstrap interval comes after its page, which fills it in without a reload", async () => {
    // Past deferIntervalsAbove rows the page is sent before the bootstrap; 10 makes the 30-row run large.
    const first = await startViewer({ store: location, port: 0, deferIntervalsAbove: 10 });
    const second = await startViewer({ store: location, port: 0, deferIntervalsAbove: 10 });
    try {
      const html = await (await fetch(`${first.url}runs/${fixture.graded}`)).text();
      expect(html).toMatch(/data-metric-ci="quality" data-pending="1">computing…</);
      const shown = showRun(LabStore.open(fixture.path).run(fixture.graded)!);
      const line = /^quality\s+(\S+)\s+(\S+ to \S+)\s+(\S+)$/m.exec(shown)!;
      await page.goto(`${second.url}runs/${fixture.graded}`, { waitUntil: "load" });
      // Up to 30 s (it was 5): on a busy 2-core machine the worker's first interval (its module compiled as
      // it starts) came later than that once in 2 runs. The wait ends as soon as the page has filled it in.
      await page.waitForFunction(() => document.querySelectorAll("[data-pending]").length === 0, { timeout: 30_000, polling: 50 });
      expect(await page.$eval('[data-metric="quality"]', (e) => e.textContent)).toBe(line[1]);
      expect(await page.$eval('[data-metric-ci="quality"]', (e) => e.textContent)).toBe(line[2]);
      expect(await page.$eval('[data-metric-method="quality"]', (e) => e.textContent)).toBe(line[3]);
      // Once computed it is kept: the next page has it at once.
      expect(await (await fetch(`${first.url}runs/${fixture.graded}`)).text()).toContain(`data-metric-ci="quality">${line[2]}<`);
    } finally {
      await first.close();
      await second.close();
    }
  }, 90_000);
});
