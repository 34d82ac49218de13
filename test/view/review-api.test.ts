// The viewer's one write, `POST /api/reviews`, over HTTP: only in review mode (405 otherwise), only
// with the session's token (403 without or with another), only from the viewer's own origin and to a
// Host it answers to (403), only JSON (415) that fits a review (400 with a sentence); what it takes is
// stored as an annotation and listed by `GET /api/reviews?runId=`. The queue page exists only in review mode.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { listAnnotations } from "../../lib/store/annotations/annotations.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { reviewLabFile, send } from "./review-fixture.js";

let lab: ReturnType<typeof reviewLabFile>;
let review: Viewer;
let readOnly: Viewer;

beforeAll(async () => {
  lab = reviewLabFile();
  review = await startViewer({ store: lab.path, port: 0, review: true, reviewer: "ann" });
  readOnly = await startViewer({ store: lab.path, port: 0 });
}, 60_000);
afterAll(async () => {
  await review?.close();
  await readOnly?.close();
});

function post(viewer: Viewer, body: unknown, headers: Record<string, string> = {}) {
  const host = new URL(viewer.url).host;
  return send(`${viewer.url}api/reviews`, {
    method: "POST",
    headers: { host, origin: `http://${host}`, "content-type": "application/json", "x-typelm-token": viewer.token ?? "", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("POST /api/reviews", () => {
  it("prints a token only in review mode and answers 405 without --review, whatever the headers", async () => {
    expect(review.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(review.reviewUrl).toBe(`${review.url}review#token=${review.token}`);
    expect(readOnly.token).toBeUndefined();
    const res = await post(readOnly, { runId: lab.ids.judged, exampleId: "q-0", verdict: "pass" }, { "x-typelm-token": review.token! });
    expect(res.status).toBe(405);
    expect(JSON.parse(res.text).error).toMatch(/read-only: start it with typelm view --review/);
    // Any other write is refused as before, in either mode.
    expect((await send(`${review.url}api/runs`, { method: "POST", body: "{}" })).status).toBe(405);
    expect((await send(`${review.url}api/reviews`, { method: "PUT", body: "{}" })).status).toBe(405);
  });

  it("refuses a post without the token, with another, from another origin or to another Host (403), and writes nothing", async () => {
    const body = { runId: lab.ids.judged, exampleId: "q-1", verdict: "fail" };
    const without = await post(review, body, { "x-typelm-token": "" });
    expect(without.status).toBe(403);
    expect(JSON.parse(without.text).error).toMatch(/needs the session's token in the X-Typelm-Token header/);
    expect((await post(review, body, { "x-typelm-token": `${review.token!.slice(1)}x` })).status).toBe(403);
    expect((await post(review, body, { "x-typelm-token": readOnly.token ?? "another" })).status).toBe(403);
    const cross = await post(review, body, { origin: "http://evil.example" });
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.text).error).toMatch(/only from the viewer's own pages; this request came from http:\/\/evil\.example/);
    expect((await post(review, body, { origin: "null" })).status).toBe(403);
    expect((await post(review, body, { "sec-fetch-site": "cross-site", origin: undefined as unknown as string })).status).toBe(403);
    const rebound = await post(review, body, { host: `evil.example:${new URL(review.url).port}`, origin: `http://evil.example:${new URL(review.url).port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.text).toMatch(/answers only to/);
    expect(await listAnnotations(LabStore.open(lab.path), lab.ids.judged, { all: true })).toEqual([]);
  });

  it("takes only JSON that fits a review: 415 for a form or text, 400 with a sentence for the rest", async () => {
    const form = await post(review, "runId=x&verdict=pass", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    expect((await post(review, "{}", { "content-type": "text/plain" })).status).toBe(415);
    const cases: [unknown, RegExp][] = [
      ["{not json", /not valid JSON/],
      [[1, 2], /must be a JSON object/],
      [{ runId: lab.ids.judged, exampleId: "q-1" }, /^Verdict must be "pass", "fail" or a number/],
      [{ runId: lab.ids.judged, exampleId: "q-1", verdict: "good" }, /^Verdict must be/],
      [{ runId: lab.ids.judged, exampleId: "q-1", verdict: "pass", expected: "answer" }, /^Expected, when given, must be an object/],
      [{ runId: lab.ids.judged, exampleId: "q-1", verdict: "pass", note: 3 }, /^Note, when given, must be a string/],
      [{ runId: lab.ids.judged, exampleId: "q-1", verdict: "pass", reviewer: "mallory" }, /^Unknown field "reviewer"/],
      [{ runId: "no-such-run", exampleId: "q-1", verdict: "pass" }, /^No run "no-such-run"/],
      [{ runId: lab.ids.judged, exampleId: "q-99", verdict: "pass" }, /has no row whose example id is "q-99"/],
      [{ runId: lab.ids.optimization, exampleId: "q-1", verdict: "pass" }, /has no row/],
    ];
    for (const [body, message] of cases) {
      const res = await post(review, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(JSON.parse(res.text).error).toMatch(message);
    }
    expect((await post(review, JSON.stringify({ note: "x".repeat(300 * 1024) }))).status).toBe(413);
    expect(await listAnnotations(LabStore.open(lab.path), lab.ids.judged, { all: true })).toEqual([]);
  });

  it("stores a review with the token, the reviewer's name and the corrected output, and lists it by run", async () => {
    const res = await post(review, { runId: lab.ids.judged, exampleId: "q-1", verdict: "fail", expected: { answer: "answer one" }, note: "<b>off</b>" });
    expect(res.status).toBe(201);
    const stored = JSON.parse(res.text);
    expect(stored).toMatchObject({ runId: lab.ids.judged, exampleId: "q-1", verdict: "fail", expected: { answer: "answer one" }, note: "<b>off</b>", reviewer: "ann" });
    // A request without Origin (a script, curl) with the token is taken too.
    expect((await post(review, { runId: lab.ids.judged, exampleId: "q-1", verdict: 4 }, { origin: undefined as unknown as string })).status).toBe(201);
    for (const viewer of [review, readOnly]) {
      const latest = JSON.parse((await send(`${viewer.url}api/reviews?runId=${lab.ids.judged}`, {})).text);
      expect(latest.map((a: { exampleId: string; verdict: unknown }) => [a.exampleId, a.verdict])).toEqual([["q-1", 4]]);
      const all = JSON.parse((await send(`${viewer.url}api/reviews?runId=${lab.ids.judged}&all=1`, {})).text);
      expect(all.map((a: { verdict: unknown }) => a.verdict)).toEqual(["fail", 4]);
    }
    const missing = await send(`${review.url}api/reviews`, {});
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text).error).toMatch(/runId is missing/);
  });

  it("serves the queue page only in review mode; read-only, /review offers nothing that writes", async () => {
    const page = await send(`${readOnly.url}review`, {});
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/started read-only/);
    expect(page.text).not.toMatch(/<script|<textarea|api\/reviews/);
    const queue = await send(`${review.url}review`, {});
    expect(queue.status).toBe(200);
    expect(queue.text).toMatch(/data-review-row/);
    expect(queue.text).not.toContain(review.token!);
    // The page's script runs under its nonce only.
    const nonce = /<script nonce="([^"]+)"/.exec(queue.text)![1];
    expect(queue.headers["content-security-policy"]).toContain(`script-src 'nonce-${nonce}'`);
    expect((await send(`${review.url}review?max=x&metric=correct`, {})).status).toBe(400);
  });
});
