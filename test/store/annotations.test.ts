// People's reviews of a run's rows (the `annotations` table), on both engines: a temporary SQLite file
// and a fresh database of a real PostgreSQL server this suite starts. The table's exact columns are
// read with plain SQL, since other commands (the traces export) read them by name.
import { describe, expect, it } from "@jest/globals";
import { ValidationError } from "../../lib/errors.js";
import { addAnnotation, listAnnotations } from "../../lib/store/annotations/annotations.js";
import type { Lab } from "../../lib/store/lab-store.js";
import { bothEngines, type Engine, row, settle, sqlIn } from "./lab-engines.js";

const { engines } = bothEngines("the annotations table");

async function labWithRun(engine: Engine): Promise<{ lab: Lab; location: string; runId: string }> {
  const location = engine.fresh();
  const lab = engine.open(location);
  const runId = lab.startRun({ kind: "evaluation", name: "reviewed", config: {} });
  lab.recordExample(runId, row(0));
  lab.recordExample(runId, row(1));
  lab.recordExample(runId, row(2, { exampleId: null }));
  await settle(lab);
  return { lab, location, runId };
}

describe.each(engines)("annotations on %s", (_name, engine) => {
  it("stores each review with the table's exact columns and lists the latest per row, or every one", async () => {
    const { lab, location, runId } = await labWithRun(engine);
    const first = await addAnnotation(lab, { runId, exampleId: "test-0", verdict: "fail", note: "wrong <b>label</b>", reviewer: "ann" });
    await addAnnotation(lab, { runId, exampleId: "test-1", verdict: 4, reviewer: "bob" });
    const again = await addAnnotation(lab, { runId, exampleId: "test-0", verdict: "pass", expected: { label: "negative" }, reviewer: "ann" });
    // A row recorded without an example id is named by its index.
    await addAnnotation(lab, { runId, exampleId: "#2", verdict: 0.5, reviewer: "cy" });
    expect(again.id).toBeGreaterThan(first.id);

    const columns = engine.name === "sqlite"
      ? (await sqlIn(engine, location, "PRAGMA table_info(annotations)")).map((c) => c["name"])
      : (await sqlIn(engine, location, "SELECT column_name FROM information_schema.columns WHERE table_name = 'annotations' ORDER BY ordinal_position")).map((c) => c["column_name"]);
    expect(columns).toEqual(["id", "run_id", "example_id", "verdict", "expected_json", "note", "reviewer", "created_at"]);
    const stored = await sqlIn(engine, location, "SELECT run_id, example_id, verdict, expected_json, note, reviewer FROM annotations ORDER BY id");
    expect(stored).toEqual([
      { run_id: runId, example_id: "test-0", verdict: "fail", expected_json: null, note: "wrong <b>label</b>", reviewer: "ann" },
      { run_id: runId, example_id: "test-1", verdict: "4", expected_json: null, note: null, reviewer: "bob" },
      { run_id: runId, example_id: "test-0", verdict: "pass", expected_json: '{"label":"negative"}', note: null, reviewer: "ann" },
      { run_id: runId, example_id: "#2", verdict: "0.5", expected_json: null, note: null, reviewer: "cy" },
    ]);

    const latest = await listAnnotations(lab, runId);
    expect(latest.map((a) => [a.exampleId, a.verdict, a.expected, a.reviewer])).toEqual([
      ["test-1", 4, null, "bob"], ["test-0", "pass", { label: "negative" }, "ann"], ["#2", 0.5, null, "cy"],
    ]);
    expect(Number.isNaN(Date.parse(latest[0]!.createdAt))).toBe(false);
    expect((await listAnnotations(lab, runId, { all: true })).map((a) => a.verdict)).toEqual(["fail", 4, "pass", 0.5]);
    expect(await listAnnotations(lab, "no-such-run")).toEqual([]);
  }, 60_000);

  it("refuses a review of a run or a row the lab does not hold, or one that does not fit, and writes nothing", async () => {
    const { lab, location, runId } = await labWithRun(engine);
    await expect(addAnnotation(lab, { runId: "nope", exampleId: "test-0", verdict: "pass", reviewer: "ann" })).rejects.toThrow(/no run "nope"/);
    await expect(addAnnotation(lab, { runId, exampleId: "test-9", verdict: "pass", reviewer: "ann" })).rejects.toThrow(/has no row whose example id is "test-9"/);
    await expect(addAnnotation(lab, { runId, exampleId: "#0", verdict: "pass", reviewer: "ann" })).rejects.toThrow(/has no row/);
    const bad = addAnnotation(lab, { runId, exampleId: "test-0", verdict: "maybe" as "pass", reviewer: "ann" });
    await expect(bad).rejects.toThrow(ValidationError);
    await expect(bad).rejects.toThrow(/verdict must be "pass", "fail" or a number/);
    await expect(addAnnotation(lab, { runId, exampleId: "test-0", verdict: Number.NaN, reviewer: "ann" })).rejects.toThrow(/verdict/);
    expect(await sqlIn(engine, location, "SELECT count(*) AS n FROM annotations")).toEqual([{ n: engine.name === "sqlite" ? 0 : "0" }]);
  }, 60_000);
});
