/**
 * A graded metric's bootstrap interval over a large run takes seconds; the viewer computes it on a
 * worker thread, so its other pages are answered meanwhile, and keeps it for the finished run.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";

/** Rows enough that the BCa bootstrap (2,000 resamples of every score) takes well over a second here. */
const ROWS = 120_000;

describe("the viewer's bootstrap intervals", () => {
  let dir: string;
  let runId: string;
  let viewer: Viewer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "typelm-view-intervals-"));
    const path = join(dir, "lab.sqlite");
    const lab = LabStore.open(path);
    runId = lab.startRun({ kind: "evaluation", name: "large graded", config: { metrics: ["quality"] } });
    const db = openStoreSync(path);
    const insert = db.prepare(
      `INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost)
       VALUES (?, ?, ?, '{"q":"x"}', '{"a":"y"}', '{"a":"y"}', ?, NULL, 1, 1, 1, 0)`,
    );
    db.transaction(() => {
      for (let i = 0; i < ROWS; i++) insert.run(runId, i, `ex-${i}`, JSON.stringify({ quality: [0, 0.5, 1][i % 3] }));
    })();
    lab.finishRun(runId, { status: "completed", score: 0.5, summary: { metrics: { quality: 0.5 } } });
    lab.close();
    closeStoreSync(path);
    // Every interval is computed before its answer (none deferred), so the run's JSON waits for it.
    viewer = await startViewer({ store: path, port: 0, deferIntervalsAbove: Number.MAX_SAFE_INTEGER });
  }, 60000);

  afterAll(async () => {
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("another page is answered while a slow interval is being computed, and the interval is kept", async () => {
    const finished: string[] = [];
    const started = performance.now();
    const slow = fetch(`${viewer.url}api/runs/${runId}`).then(async (r) => {
      finished.push("interval");
      return { status: r.status, body: await r.json() as { metrics: { name: string; ci: [number, number]; method: string }[] }, ms: performance.now() - started };
    });
    // The run's request has been read and its scores loaded; its bootstrap is under way.
    await new Promise((r) => setTimeout(r, 400));
    const askedAt = performance.now();
    // Answered in milliseconds when the server is free; on the server's own thread it would wait for the bootstrap.
    const runs = await fetch(`${viewer.url}?kind=evaluation`, { signal: AbortSignal.timeout(3000) });
    const runsMs = performance.now() - askedAt;
    finished.push("runs page");
    expect(runs.status).toBe(200);
    expect(await runs.text()).toContain(`data-run-id="${runId}"`);
    const interval = await slow;
    // On the server's own thread the bootstrap would hold the runs page until it ended.
    expect(finished).toEqual(["runs page", "interval"]);
    expect(interval.ms).toBeGreaterThan(runsMs + 400);
    expect(interval.status).toBe(200);
    const [line] = interval.body.metrics;
    expect(line).toMatchObject({ name: "quality", method: "bootstrap-bca" });
    expect(line!.ci[0]).toBeLessThan(0.5);
    expect(line!.ci[1]).toBeGreaterThan(0.5);
    expect(line!.ci[1] - line!.ci[0]).toBeLessThan(0.02);
    // Kept for the finished run: asked again, it comes at once.
    const againAt = performance.now();
    const again = await (await fetch(`${viewer.url}api/runs/${runId}`)).json() as { metrics: { ci: [number, number] }[] };
    expect(again.metrics[0]!.ci).toEqual(line!.ci);
    expect(performance.now() - againAt).toBeLessThan(interval.ms / 2);
  }, 60000);

  it("another page is answered while two large runs are compared (the run against itself: no difference)", async () => {
    const finished: string[] = [];
    const started = performance.now();
    const slow = fetch(`${viewer.url}api/compare/${runId}/${runId.slice(0, 8)}`).then(async (r) => {
      finished.push("comparison");
      return { status: r.status, body: await r.json() as { comparisons: { metric: string; diff: number; ci: [number, number]; test: string; better: string[] }[] }, ms: performance.now() - started };
    });
    await new Promise((r) => setTimeout(r, 400));
    const askedAt = performance.now();
    const runs = await fetch(`${viewer.url}api/runs`, { signal: AbortSignal.timeout(3000) });
    const runsMs = performance.now() - askedAt;
    finished.push("runs");
    expect(runs.status).toBe(200);
    const compared = await slow;
    expect(finished).toEqual(["runs", "comparison"]);
    expect(compared.ms).toBeGreaterThan(runsMs + 400);
    expect(compared.status).toBe(200);
    // The run against itself: no difference, nothing changed.
    expect(compared.body.comparisons).toHaveLength(1);
    expect(compared.body.comparisons[0]).toMatchObject({ metric: "quality", diff: 0, ci: [0, 0], test: "sign-flip", better: [] });
  }, 60000);
});
