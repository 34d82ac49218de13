// The review queue on a team's lab on PostgreSQL (a real server this suite starts): the viewer started
// with --review over a postgres:// URL lists the rows, takes a review through POST /api/reviews with the
// session's token, stores it in the database's annotations table, and lists it back.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { postgresAvailable, postgresEngine, requirePostgres, sqlOn } from "../store/lab-engines.js";
import { fillReviewLab, send } from "./review-fixture.js";

const postgres = postgresEngine();
const withPostgres = requirePostgres("the review queue");
const maybe = withPostgres ? describe : describe.skip;

let url: string;
let ids: ReturnType<typeof fillReviewLab>;
let viewer: Viewer;

beforeAll(async () => {
  if (!withPostgres) return;
  await postgres.setup();
  url = postgres.fresh();
  const lab = PostgresLabStore.open(url);
  ids = fillReviewLab(lab);
  await lab.flush();
  viewer = await startViewer({ store: url, port: 0, review: true, reviewer: "pat" });
}, 60_000);
afterAll(async () => {
  await viewer?.close();
  if (postgresAvailable) await postgres.teardown();
}, 30_000);

maybe("the review queue on PostgreSQL", () => {
  it("lists the rows, takes a review with the token into the annotations table, and lists it", async () => {
    const page = await send(`${viewer.url}review?run=${ids.judged}`, {});
    expect([...page.text.matchAll(/data-example-id="([^"]+)"/g)].map((m) => m[1])).toEqual(["q-0", "q-1", "q-2", "q-3"]);
    const host = new URL(viewer.url).host;
    const headers = { host, origin: `http://${host}`, "content-type": "application/json", "x-typelm-token": viewer.token! };
    const body = JSON.stringify({ runId: ids.judged, exampleId: "q-3", verdict: "fail", expected: { answer: "three" }, note: "<i>x</i>" });
    expect((await send(`${viewer.url}api/reviews`, { method: "POST", headers: { ...headers, "x-typelm-token": "wrong" }, body })).status).toBe(403);
    const res = await send(`${viewer.url}api/reviews`, { method: "POST", headers, body });
    expect(res.status).toBe(201);
    expect(await sqlOn(url, "SELECT run_id, example_id, verdict, expected_json, note, reviewer FROM annotations")).toEqual([
      { run_id: ids.judged, example_id: "q-3", verdict: "fail", expected_json: '{"answer":"three"}', note: "<i>x</i>", reviewer: "pat" },
    ]);
    const listed = JSON.parse((await send(`${viewer.url}api/reviews?runId=${ids.judged}`, {})).text);
    expect(listed.map((a: { exampleId: string; verdict: string }) => [a.exampleId, a.verdict])).toEqual([["q-3", "fail"]]);
    // Reviewed rows go last.
    const again = await send(`${viewer.url}review?run=${ids.judged}`, {});
    expect([...again.text.matchAll(/data-example-id="([^"]+)"/g)].map((m) => m[1])).toEqual(["q-0", "q-1", "q-2", "q-3"].filter((i) => i !== "q-3").concat("q-3"));
  }, 60_000);

  it("narrows the queue by users' latest feedback (lab_feedback) on PostgreSQL too", async () => {
    await sqlOn(url, "INSERT INTO lab_feedback (trace_id, score, comment, created_at) VALUES ($1, $2, $3, $4), ($5, $6, $7, $8), ($9, $10, $11, $12)",
      ["q-0", 1, null, "2026-01-01T00:00:01.000Z", "q-2", 1, null, "2026-01-01T00:00:02.000Z", "q-2", 0, "<b>wrong</b>", "2026-01-01T00:00:03.000Z"]);
    const runId = ids.judged;
    const shown = async (q: string) => [...(await send(`${viewer.url}review?run=${runId}&order=index${q}`, {})).text.matchAll(/data-example-id="([^"]+)"/g)].map((m) => m[1]);
    expect(await shown("&feedback=negative")).toEqual(["q-2"]);
    expect(await shown("&feedback=positive")).toEqual(["q-0"]);
    expect(await shown("&feedback=any")).toEqual(["q-0", "q-2"]);
    const page = (await send(`${viewer.url}review?run=${runId}&feedback=negative`, {})).text;
    expect(page).toContain("&lt;b&gt;wrong&lt;/b&gt;");
  }, 60_000);
});
