/**
 * `typelm view` in a real browser (Debian's Chromium through puppeteer-core): every page loads with
 * its test hooks, the filters narrow what is listed (on the server), hostile stored text is shown as
 * text and never runs, and browsing writes nothing to the store. On the lab file and on the same lab
 * in PostgreSQL (copied there as `typelm lab copy` copies it): the pages are the same.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { Page } from "puppeteer-core";
import { metricsOf } from "../../lib/evaluate/stored-run.js";
import { showRun } from "../../lib/lab/cli/show.js";
import { adjustComparisons, compare } from "../../lib/evaluate/compare.js";
import type { EvaluationRun } from "../../lib/store/records.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { Viewer } from "../../lib/view/server.js";
import { browseFixture, browserTestsRun } from "./browser.js";
import { HOSTILE, postgresDigest, SYSTEM, viewerEngines, type Engine, type Fixture } from "./fixture.js";

/** The page's globals, in the functions run in the browser (the project compiles without the DOM library). */
declare const window: any, document: any;

const run = browserTestsRun();
const maybe = run ? describe : describe.skip;

function fingerprint(path: string): { hash: string; mtimeMs: number; size: number } {
  const s = statSync(path);
  return { hash: createHash("sha256").update(readFileSync(path)).digest("hex"), mtimeMs: s.mtimeMs, size: s.size };
}

/** What the store holds, to compare before and after browsing: the file's bytes, or every table of the database. */
async function snapshot(engine: Engine, location: string): Promise<unknown> {
  return engine === "sqlite" ? fingerprint(location) : await postgresDigest(location);
}

const engines: Engine[] = run ? viewerEngines() : ["sqlite"];
for (const engine of engines) maybe(`the run viewer in Chromium (${engine})`, () => {
  let fixture: Fixture;
  let location: string;
  let before: unknown;
  let viewer: Viewer;
  let page: Page;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ fixture, location, viewer, page, close } = await browseFixture(engine, async (lab) => { before = await snapshot(engine, lab); }));
  }, 60000);

  afterAll(async () => {
    await close?.();
  }, 30000);

  /** Opens `path`, checks the answer, and that nothing stored ran as script. */
  async function open(path: string, status = 200): Promise<void> {
    const response = await page.goto(viewer.url + path.replace(/^\//, ""), { waitUntil: "load" });
    expect(response?.status()).toBe(status);
    await assertInert();
  }

  async function assertInert(): Promise<void> {
    const state = await page.evaluate(() => ({
      pwned: window.__pwned,
      scripts: [...document.querySelectorAll("script")].map((s) => (s.textContent?.includes("/api/runs/") || s.textContent?.includes("data-select-run")) ?? false),
      images: document.querySelectorAll("img").length,
      handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
    }));
    expect(state.pwned).toBeUndefined();
    // At most the viewer's own script (live updates, or picking runs); no stored text became an element.
    expect(state.scripts.every((own) => own)).toBe(true);
    expect(state.scripts.length).toBeLessThanOrEqual(1);
    expect(state.images).toBe(0);
    expect(state.handlers).toBe(0);
  }

  const text = () => page.evaluate(() => document.body.innerText);
  const count = (selector: string) => page.$$eval(selector, (found) => found.length);

  it("lists every run, newest first, each linked with data-run-id", async () => {
    await open("/");
    const ids = await page.$$eval("a[data-run-id]", (links) => links.map((a) => a.getAttribute("data-run-id")));
    expect(ids).toEqual([fixture.running, fixture.graded, fixture.optimization, fixture.evalB, fixture.evalA]);
  });

  it("the runs filters narrow the list: kind, status, name, model", async () => {
    await open("/");
    await page.select("select[name=kind]", "optimization");
    await Promise.all([page.waitForNavigation(), page.click("form.filters button")]);
    expect(await page.$$eval("a[data-run-id]", (l) => l.map((a) => a.getAttribute("data-run-id")))).toEqual([fixture.optimization]);
    await open("/?status=running");
    expect(await page.$$eval("a[data-run-id]", (l) => l.map((a) => a.getAttribute("data-run-id")))).toEqual([fixture.running]);
    await open("/");
    await page.type("input[name=model]", "CLAUDE");
    await Promise.all([page.waitForNavigation(), page.click("form.filters button")]);
    expect(await page.$$eval("a[data-run-id]", (l) => l.map((a) => a.getAttribute("data-run-id")))).toEqual([fixture.evalB]);
    await open("/?name=basel");
    expect(await page.$$eval("a[data-run-id]", (l) => l.map((a) => a.getAttribute("data-run-id")))).toEqual([fixture.evalA]);
    await open("/?kind=nonsense", 400);
    expect(await text()).toContain("kind expects evaluation, optimization or traces");
  });

  it("an evaluation: the metric with its Wilson interval, the rows paged 50 at a time, hostile text as text", async () => {
    await open(`/runs/${fixture.evalA}`);
    // 44 of 60 right; the Wilson 95% interval of 44/60 is 0.610 to 0.829 (z = 1.96).
    expect(await page.$eval('[data-metric="accuracy"]', (e) => e.textContent)).toBe("0.733");
    expect(await page.$eval('[data-metric-ci="accuracy"]', (e) => e.textContent)).toBe("0.610 to 0.829");
    expect(await count("tr[data-example-id]")).toBe(50);
    const body = await text();
    for (const h of HOSTILE.slice(0, 2)) expect(body).toContain(`sentence: ${h}`);
    await Promise.all([page.waitForNavigation(), page.click("a[rel=next]")]);
    await assertInert();
    const second = await page.$$eval("tr[data-example-id]", (rows) => rows.map((r) => r.getAttribute("data-example-id")));
    expect(second).toEqual(Array.from({ length: 10 }, (_, i) => `ex-${50 + i}`));
  });

  it("each metric and its interval are those typelm show prints: a share's Wilson interval, a graded metric's bootstrap", async () => {
    const lab = LabStore.open(fixture.path);
    for (const id of [fixture.evalA, fixture.graded]) {
      const shown = showRun(lab.run(id)!);
      await open(`/runs/${id}`);
      const lines = await page.$$eval("#metrics tbody tr", (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
      expect(lines.length).toBeGreaterThan(0);
      for (const [metric, value, interval, method] of lines) {
        // typelm show's table line: metric, value, "low to high", method.
        expect(shown).toMatch(new RegExp(`^${metric}\\s+${value!.replace(".", "\\.")}\\s+${interval!.replace(/\./g, "\\.")}\\s+${method}$`, "m"));
      }
    }
    expect(await page.$eval('[data-metric="quality"]', (e) => e.textContent)).not.toBe("");
    lab.close();
  });

  it("the rows filters narrow on the server: failed, label, text, score, and sort", async () => {
    const ids = () => page.$$eval("tr[data-example-id]", (rows) => rows.map((r) => r.getAttribute("data-example-id")));
    await open(`/runs/${fixture.evalA}`);
    await page.click("input[name=failed]");
    await Promise.all([page.waitForNavigation(), page.click("form.filters button")]);
    await assertInert();
    expect(await ids()).toEqual(["ex-7"]);
    expect(await text()).toContain(`OutputError: the reply was not JSON: ${HOSTILE[1]}`);

    await open(`/runs/${fixture.evalA}?label=negative`);
    expect(await ids()).toEqual(Array.from({ length: 20 }, (_, i) => `ex-${i * 3}`));
    await open(`/runs/${fixture.evalA}?text=NUMBER%205`);
    expect(await ids()).toEqual(["ex-5", ...Array.from({ length: 10 }, (_, i) => `ex-${50 + i}`)]);
    await open(`/runs/${fixture.evalA}?metric=accuracy&max=0`);
    expect(await ids()).toEqual([1, 5, 7, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57].map((i) => `ex-${i}`));
    await open(`/runs/${fixture.evalA}?sort=duration&desc=1&size=3`);
    expect(await ids()).toEqual(["ex-59", "ex-58", "ex-57"]);
    await open(`/runs/${fixture.evalA}?label=nothing-has-this`);
    expect(await count("tr[data-example-id]")).toBe(0);
    expect(await text()).toContain("No example matches these filters");
  });

  it("hostile filter values stay inside their attributes: quotes in ?text= and ?label= add no attribute", async () => {
    const payloads = [`" onmouseover="window.__pwned=5" x="`, `' onfocus='window.__pwned=6' autofocus x='`, `"><img src=x onerror="window.__pwned=7">`, `x" data-injected="1`];
    for (const payload of payloads) {
      await open(`/runs/${fixture.evalA}?text=${encodeURIComponent(payload)}&label=${encodeURIComponent(payload)}`);
      const inputs = await page.$$eval("form.filters input[name=text], form.filters input[name=label]", (found) =>
        found.map((e) => ({ value: e.value, attributes: [...e.attributes].map((a: { name: string }) => a.name).sort() })));
      expect(inputs).toEqual([
        { value: payload, attributes: ["list", "name", "value"] },
        { value: payload, attributes: ["name", "value"] },
      ]);
      const injected = await page.evaluate(() => [...document.querySelectorAll("*")].flatMap((e) => [...e.attributes].map((a) => a.name))
        .filter((name: string) => ["x", "x'", "autofocus", "data-injected", "onmouseover", "onfocus", "onerror"].includes(name)));
      expect(injected).toEqual([]);
      await page.hover("form.filters input[name=text]");
      await page.focus("form.filters input[name=label]");
      expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    }
  });

  it("one example: inputs, expected, prediction, scores and error, hostile text as text", async () => {
    await open(`/runs/${fixture.evalA}/rows/7`);
    expect(await page.$eval("#error", (e) => e.textContent)).toBe(`OutputError: the reply was not JSON: ${HOSTILE[1]}`);
    expect(await page.$eval("#prediction", (e) => e.textContent)).toBe("—");
    expect(await page.$eval('[data-metric="accuracy"]', (e) => e.textContent)).toBe("0.000");
    await open(`/runs/${fixture.evalA}/rows/3`);
    expect(await page.$eval('#inputs .field[data-field="sentence"]', (e) => e.innerText)).toBe(`sentence: ${HOSTILE[3]}`);
    await open(`/runs/${fixture.evalA}/rows/999`, 404);
  });

  it("one example's model calls as a transcript: messages, raw reply, model, tokens, latency, cache hit", async () => {
    await open(`/runs/${fixture.evalA}/rows/7`);
    expect(await count("[data-call]")).toBe(1);
    expect(await page.$eval("[data-call] .reply", (e) => e.textContent)).toBe(`${HOSTILE[0]} ${HOSTILE[1]}`);
    expect(await page.$$eval('[data-call] [data-role] pre', (pres) => pres.map((p) => p.textContent)))
      .toEqual([SYSTEM, "sentence: example 7", `${HOSTILE[0]} ${HOSTILE[1]}`]);
    await open(`/runs/${fixture.evalA}/rows/0`);
    const calls = await page.$$eval("[data-call]", (sections) => sections.map((s) => s.firstElementChild?.textContent?.replace(/\s+/g, " ")));
    expect(calls).toEqual([
      "call 1 · openai/gpt-4o-mini · 120 input tokens · 9 output tokens · 310 ms · cost 0.000020",
      "call 2 · openai/gpt-4o-mini · 120 input tokens · 9 output tokens · 1 ms · cost 0.000000 · cached",
    ]);
    await open(`/runs/${fixture.evalA}/rows/1`);
    expect(await count("[data-call]")).toBe(0);
    expect(await page.$eval("#calls", (e) => e.textContent)).toContain("No model call was recorded");
    const api = await (await fetch(`${viewer.url}api/runs/${fixture.evalA}/rows/0`)).json() as { calls: { cached: boolean; messages: { content: string }[] }[] };
    expect(api.calls.map((c) => c.cached)).toEqual([false, true]);
    expect(api.calls[0]!.messages[0]!.content).toBe(SYSTEM);
  });

  it("an optimization: the trials chart and table, the candidates' instructions and demos, the lineage", async () => {
    await open(`/runs/${fixture.optimization}`);
    expect(await count("#trials tbody tr[data-trial]")).toBe(5);
    // The chart is SVG vega drew on the server: one point per trial (scores 0.5 to 0.9), labelled.
    expect(await page.$$eval("#trials-chart svg .trials_marks path", (points) => points.map((p) => p.getAttribute("aria-label"))))
      .toEqual([0, 1, 2, 3, 4].map((i) => `trial ${i} (${i === 0 ? "baseline" : i === 2 ? HOSTILE[1] : "candidate"}): ${["0.500", "0.600", "0.700", "0.800", "0.900"][i]}`));
    // Trial 2's hostile kind is a legend label's text, not an element.
    const legend = await page.$$eval("#trials-chart .role-legend-label text", (labels) => labels.map((t) => t.textContent));
    expect(legend).toContain("baseline");
    expect(legend.some((label) => label?.startsWith("<img src=x"))).toBe(true);
    const lineage = await page.$$eval("#lineage li", (items) => items.map((li) => li.textContent));
    expect(lineage).toHaveLength(4);
    expect(lineage[3]).toMatch(/^trial 4 .*← trial 2, trial 3$/);
    // Trial 3 is listed under its instruction (hostile text, as text), with its demos.
    expect(await page.$eval("#trial-3", (e) => e.innerText)).toContain("train-3");
    expect(await page.$eval("#trial-3", (e) => e.closest("section").querySelector("pre").textContent)).toBe(HOSTILE[0]);
  });

  it("a comparison: the difference as typelm compare computes it and the changed examples side by side", async () => {
    await open(`/compare/${fixture.evalA}/${fixture.evalB}`);
    // A: 44/60, B: 55/60; the 11 examples wrong in A only (i % 4 = 1 but not i % 12 = 1, and 7) got better.
    expect(await page.$eval('[data-metric="accuracy"]', (e) => e.textContent)).toBe("+0.183");
    expect(await page.$$eval("#changed tr[data-example-id]", (rows) => rows.map((r) => r.getAttribute("data-example-id"))))
      .toEqual([5, 7, 9, 17, 21, 29, 33, 41, 45, 53, 57].map((i) => `ex-${i}`));
    expect(await text()).toContain("11 better, 0 worse");
    // Side by side: score change, id (linked to A's row), input, expected, A's and B's predictions.
    expect(await page.$eval('#changed tr[data-example-id="ex-5"]', (tr) => [...tr.cells].map((c) => c.textContent)))
      .toEqual(["+ 0.00 → 1.00", "ex-5", "sentence: sentence number 5", "sentiment: positive", "sentiment: wrong", "sentiment: positive"]);
    expect(await page.$eval('#changed tr[data-example-id="ex-7"] td:nth-child(5)', (td) => td.innerText)).toBe(`failed: OutputError: the reply was not JSON: ${HOSTILE[1]}`);
    await open(`/compare/${fixture.evalA}/${fixture.optimization}`, 400);
  });

  it("the registry: versions with scores and the instruction and demo difference", async () => {
    await open("/registry");
    expect(await page.$$eval("#registry tr[data-name]", (rows) => rows.map((r) => [...r.cells].slice(0, 4).map((c) => c.textContent))))
      .toEqual([["sentiment", "2", "v2", "0.800"]]);
    await open("/registry/sentiment");
    expect(await count("#versions tr[data-version]")).toBe(2);
    const classify = await page.$eval('[data-predictor="classify"]', (e) => e.textContent);
    expect(classify).toContain(`+ Label the sentence; irony counts as negative. ${HOSTILE[1]}`);
    expect(classify).toContain("2 added, 0 removed");
    await open("/registry/nothing", 404);
  });

  it("the JSON API gives the same data, and the viewer refuses writes", async () => {
    const rows = await (await fetch(`${viewer.url}api/runs/${fixture.evalA}/rows?failed=1`)).json() as { rows: { exampleId: string; error: string }[]; total: number };
    expect(rows.total).toBe(1);
    expect(rows.rows[0]).toMatchObject({ exampleId: "ex-7", error: `OutputError: the reply was not JSON: ${HOSTILE[1]}` });
    const compared = await (await fetch(`${viewer.url}api/compare/${fixture.evalA}/${fixture.evalB}`)).json() as { comparisons: { metric: string; diff: number; better: string[] }[] };
    expect(compared.comparisons[0]!.diff).toBeCloseTo(11 / 60, 10);
    // Exactly what typelm compare computes from the same runs (the viewer computes it on a worker thread).
    const lab = LabStore.open(fixture.path);
    const [a, b, g] = [fixture.evalA, fixture.evalB, fixture.graded].map((id) => {
      const r = lab.run(id) as EvaluationRun;
      return { results: r.rows, metrics: metricsOf(r) };
    });
    lab.close();
    expect(compared.comparisons).toEqual(JSON.parse(JSON.stringify(adjustComparisons([compare(a!, b!, { metric: "accuracy" })]))));
    const graded = await (await fetch(`${viewer.url}api/compare/${fixture.graded}/${fixture.graded}`)).json() as { comparisons: unknown[] };
    expect(graded.comparisons).toEqual(JSON.parse(JSON.stringify(adjustComparisons([compare(g!, g!, { metric: "quality" })]))));
    expect((await fetch(`${viewer.url}api/runs/${fixture.evalA}`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`${viewer.url}api/nothing`)).status).toBe(404);
  });

  it("browsing wrote nothing to the store", async () => {
    expect(await snapshot(engine, location)).toEqual(before);
  });
});
