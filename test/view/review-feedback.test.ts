// The review queue's feedback filter (`/review?feedback=negative|positive|any`): users' feedback from
// `recordFeedback` lives in the lab's lab_feedback table under the row's example id (a trace id); the
// queue shows each row's latest feedback and narrows to thumbs-down (latest score 0 or less), thumbs-up
// or any, also past the first rows a run's page reads. A filter of another form is a 400 with a sentence.
// The viewer lists runs of kind traces by kind (GET /api/runs?kind=traces), as the review script finds them.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { LabStore } from "../../lib/store/lab-store.js";
import { labQuery } from "../../lib/traces/sql.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { judgedRow, reviewLabFile, send } from "./review-fixture.js";

let lab: ReturnType<typeof reviewLabFile>;
let viewer: Viewer;
let long: string;

const ids = (text: string) => [...text.matchAll(/data-example-id="([^"]+)"/g)].map((m) => m[1]);

beforeAll(async () => {
  lab = reviewLabFile();
  const store = LabStore.open(lab.path);
  // q-1: a thumbs-down; q-2: a thumbs-up; q-3: a thumbs-up, then a thumbs-down (the latest counts); q-0: none.
  const given: [string, number, string | null, string][] = [
    ["q-1", 0, "wrong answer", "2026-01-01T00:00:01.000Z"],
    ["q-2", 1, null, "2026-01-01T00:00:02.000Z"],
    ["q-3", 1, null, "2026-01-01T00:00:03.000Z"],
    ["q-3", -1, "worse than before", "2026-01-01T00:00:04.000Z"],
  ];
  for (const [id, score, comment, at] of given) {
    await labQuery(store, "INSERT INTO lab_feedback (trace_id, score, comment, created_at) VALUES (?, ?, ?, ?)", [id, score, comment, at]);
  }
  // A run longer than the queue reads per run: the only row with feedback is its last.
  long = store.startRun({ kind: "evaluation", name: "long", config: { metrics: ["correct"] } });
  for (let i = 0; i < 230; i++) store.recordExample(long, judgedRow(i, 1, { exampleId: `t-${i}` }));
  store.finishRun(long, { status: "completed", score: 1, summary: {} });
  await labQuery(store, "INSERT INTO lab_feedback (trace_id, score, comment, created_at) VALUES (?, ?, ?, ?)", ["t-229", 0, null, "2026-01-01T00:00:05.000Z"]);
  viewer = await startViewer({ store: lab.path, port: 0, review: true, reviewer: "ann" });
}, 60_000);
afterAll(async () => {
  await viewer?.close();
});

describe("the review queue's feedback filter", () => {
  it("narrows a run's rows to thumbs-down, thumbs-up or any feedback, by each row's latest feedback", async () => {
    const page = async (q: string) => (await send(`${viewer.url}review?run=${lab.ids.judged}&order=index${q}`, {})).text;
    expect(ids(await page(""))).toEqual(["q-0", "q-1", "q-2", "q-3"]);
    expect(ids(await page("&feedback=negative"))).toEqual(["q-1", "q-3"]);
    expect(ids(await page("&feedback=positive"))).toEqual(["q-2"]);
    expect(ids(await page("&feedback=any"))).toEqual(["q-1", "q-2", "q-3"]);
    // With the judge's score too: q-1 and q-3 scored 0 on "correct", q-2 1.
    expect(ids(await page("&feedback=any&metric=correct&max=0"))).toEqual(["q-1", "q-3"]);
  }, 60_000);

  it("shows each row's latest feedback and keeps the chosen filter in the form", async () => {
    const text = (await send(`${viewer.url}review?run=${lab.ids.judged}&feedback=negative`, {})).text;
    expect([...text.matchAll(/data-feedback="([^"]+)"/g)].map((m) => m[1])).toEqual(["0", "-1"]);
    expect(text).toContain("worse than before");
    expect(text).toMatch(/<option value="negative" selected>/);
  }, 60_000);

  it("finds a row with feedback past the first rows the queue reads per run", async () => {
    const all = (await send(`${viewer.url}review?run=${long}`, {})).text;
    expect(ids(all)).not.toContain("t-229");
    expect(ids((await send(`${viewer.url}review?run=${long}&feedback=negative`, {})).text)).toEqual(["t-229"]);
  }, 60_000);

  it("lists traces runs by kind, and names the three kinds for another", async () => {
    const store = LabStore.open(lab.path);
    const day = store.startRun({ kind: "traces", name: "Triage 2026-01-01", config: { module: "Triage", day: "2026-01-01" } });
    const listed = JSON.parse((await send(`${viewer.url}api/runs?kind=traces`, {})).text) as { runs: { id: string }[] };
    expect(listed.runs.map((r) => r.id)).toEqual([day]);
    const other = await send(`${viewer.url}api/runs?kind=trace`, {});
    expect(other.status).toBe(400);
    expect(other.text).toContain("kind expects evaluation, optimization or traces");
  }, 60_000);

  it("answers 400 with a sentence for a filter of another form", async () => {
    const res = await send(`${viewer.url}review?feedback=bad`, {});
    expect(res.status).toBe(400);
    expect(res.text).toContain("feedback expects negative (a thumbs-down: latest score 0 or less), positive or any");
  }, 60_000);
});
