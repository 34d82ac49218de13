/**
 * The viewer's pages, over HTTP on both engines: an evaluation page shows the judges' calls, tokens and
 * cost apart from the program's, and a rescored run links to its source; text search covers the judges'
 * rationales; an unknown metric in a filter is a 400 with a sentence (page and JSON); /favicon.ico is
 * served; the optimization page shows each distinct instruction once with the trials that used it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { fixtureOn, removeFixtures, viewerEngines } from "./fixture.js";
import { addJudgedRuns, JUDGE_USAGE, RATIONALE_WORD, type JudgedRuns } from "./judged-fixture.js";

afterAll(() => removeFixtures());

/** The text of `html` with its tags left out and entities read (for our own markup only). */
function textOf(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

/** The markup of the element opening with `open` (a regex source) up to its closing `</tag>` (no nesting of the same tag inside). */
function element(html: string, open: string, tag: string): string {
  const m = new RegExp(open).exec(html);
  if (m === null) throw new Error(`no ${open} in the page`);
  const end = html.indexOf(`</${tag}>`, m.index);
  return html.slice(m.index, end + tag.length + 3);
}

describe.each(viewerEngines())("the viewer's pages in detail (%s)", (engine) => {
  const runs: Partial<JudgedRuns> = {};
  let viewer: Viewer;
  let stop: () => Promise<void>;
  const get = async (path: string) => {
    const res = await fetch(viewer.url + path);
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
  };

  beforeAll(async () => {
    const on = await fixtureOn(engine, addJudgedRuns(runs));
    stop = on.stop;
    viewer = await startViewer({ store: on.location, port: 0 });
  }, 120000);

  afterAll(async () => {
    await viewer?.close();
    await stop?.();
  }, 60000);

  it("an evaluation page shows the judges' calls, tokens and cost apart from the program's", async () => {
    const page = await get(`runs/${runs.rescored}`);
    expect(page.status).toBe(200);
    const judge = textOf(element(page.body, '<tr data-usage="judge">', "tr"));
    expect(judge).toBe(`judges${JUDGE_USAGE.calls}${JUDGE_USAGE.inputTokens}${JUDGE_USAGE.outputTokens}${JUDGE_USAGE.cost.toFixed(4)}`);
    const program = textOf(element(page.body, '<tr data-usage="program">', "tr"));
    expect(program).toBe("program (not called: a rescore)—000.0000");
    // The source run: the program's own totals, and no judge line (it recorded no judge use).
    const source = await get(`runs/${runs.source}`);
    expect(textOf(element(source.body, '<tr data-usage="program">', "tr"))).toBe("program—200200.0004");
    expect(source.body).not.toContain('data-usage="judge"');
  });

  it("a rescored run links to its source run; the source has no such link", async () => {
    const page = await get(`runs/${runs.rescored}`);
    const link = element(page.body, '<p id="rescored-from">', "p");
    expect(link).toContain(`<a href="/runs/${runs.source}" data-run-id="${runs.source}" data-source-run>`);
    expect((await get(`runs/${runs.source}`)).body).not.toContain('id="rescored-from"');
  });

  it("text search covers the judges' rationales (case-insensitive), on the page and in the JSON", async () => {
    const api = JSON.parse((await get(`api/runs/${runs.rescored}/rows?text=${RATIONALE_WORD.toUpperCase()}`)).body) as { rows: { exampleId: string }[]; total: number };
    expect(api.total).toBe(1);
    expect(api.rows.map((r) => r.exampleId)).toEqual(["q-1"]);
    const page = await get(`runs/${runs.rescored}?text=${RATIONALE_WORD.toLowerCase()}`);
    expect([...page.body.matchAll(/<tr data-example-id="([^"]+)"/g)].map((m) => m[1])).toEqual(["q-1"]);
    // The source run has no rationale: the same search finds nothing there.
    expect(JSON.parse((await get(`api/runs/${runs.source}/rows?text=${RATIONALE_WORD}`)).body).total).toBe(0);
  });

  it("an unknown metric in a filter is a 400 naming it and the run's metrics, as a page and as JSON", async () => {
    const sentence = `run ${runs.source} has no metric "acuracy": its metric is accuracy`;
    const page = await get(`runs/${runs.source}?metric=acuracy&max=0`);
    expect(page.status).toBe(400);
    expect(textOf(element(page.body, '<p id="error">', "p"))).toBe(sentence);
    const api = await get(`api/runs/${runs.source}/rows?metric=acuracy`);
    expect(api.status).toBe(400);
    expect(JSON.parse(api.body)).toEqual({ error: sentence });
    // A known metric is still answered.
    expect((await get(`api/runs/${runs.source}/rows?metric=accuracy&max=0`)).status).toBe(200);
  });

  it("serves /favicon.ico as a small SVG", async () => {
    const icon = await get("favicon.ico");
    expect(icon.status).toBe(200);
    expect(icon.type).toBe("image/svg+xml");
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[\s\S]*<\/svg>$/);
    expect(icon.body.length).toBeLessThan(1000);
  });

  it("the optimization page shows each distinct instruction once, with the trials that used it", async () => {
    const page = await get(`runs/${runs.repeats}`);
    expect(page.status).toBe(200);
    // 20 trials, instruction i % 3: three sections, each instruction text once in the page's candidates.
    const sections = page.body.split('<section class="call" data-instruction=').slice(1);
    expect(sections).toHaveLength(3);
    for (let k = 0; k < 3; k++) {
      expect(page.body.split(`Answer the question (instruction ${k}).`)).toHaveLength(2);
      const uses = [...sections[k]!.matchAll(/data-trial-use="(\d+)"/g)].map((m) => Number(m[1]));
      expect(uses).toEqual(Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 3 === k));
      expect(sections[k]).toContain(k === 2 ? "Check twice." : "Check once.");
    }
    expect(textOf(page.body)).toContain("Instructions (3 distinct in 20 trials)");
    // Each trial's demos beside it; the returned trial marked.
    expect(textOf(element(page.body, '<tr id="trial-19"', "tr")).replace(/\n/g, "")).toMatch(/^19 \*minibatch0\.590answer: d-19check: none$/);
  });
});
