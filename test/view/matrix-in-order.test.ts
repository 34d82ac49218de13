/**
 * The matrix's quick line-up on the file: runs of one test set written in the same order are joined by
 * index through the primary key (no temporary B-tree: no grouping or sorting of every row), and the
 * line-up is the one worked out here by hand; runs in another order, with a row missing, or with an
 * example twice get the general read's answer (compared with that read's SQL run on its own).
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { sqliteInOrderSql } from "../../lib/view/matrix/in-order.js";
import { sqliteLineUpSql } from "../../lib/view/matrix/sql.js";
import { SqliteViewSource } from "../../lib/view/data/queries.js";
import { row } from "./fixture.js";

const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Example `i` of six: ex-i, except example 3 which has no id (`#3`); `wrong` scores 0, `missing` has no score. */
function example(i: number, wrong: number[], missing: number[] = [], named = false): EvaluationRow {
  return row(i, { exampleId: i === 3 && !named ? undefined : `ex-${i}`, scores: missing.includes(i) ? {} : { accuracy: wrong.includes(i) ? 0 : 1 } });
}

/** A file with one run per list of rows (written in the list's order, at the rows' indices); the path and the run ids. */
function store(runs: EvaluationRow[][]): { path: string; ids: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "typelm-matrix-order-"));
  dirs.push(dir);
  const path = join(dir, "lab.sqlite");
  const lab = LabStore.open(path);
  const ids = runs.map((rows, k) => {
    const id = lab.startRun({ kind: "evaluation", name: `run-${k}`, config: { metrics: ["accuracy"] } });
    for (const r of rows) lab.recordExample(id, r);
    lab.finishRun(id, { status: "completed", score: 0, summary: {} });
    return id;
  });
  closeStoreSync(path);
  return { path, ids };
}

/** The source's line-up of the runs on accuracy. */
async function lineUp(path: string, ids: string[]): Promise<unknown[]> {
  const source = new SqliteViewSource(path);
  try {
    return await source.lineUp(ids, ["accuracy"]);
  } finally {
    await source.close();
  }
}

/** The general read (examples grouped by id) run on its own, off the query thread. */
function generalLineUp(path: string, ids: string[]): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    const params: Record<string, unknown> = { runs: JSON.stringify(ids), first: ids[0], k: ids.length, p0: '$."accuracy"' };
    ids.forEach((id, j) => { params[`r${j}`] = id; });
    return db.prepare(sqliteLineUpSql(ids.length, 1, (c) => c, "")).all(params);
  } finally {
    db.close();
  }
}

const six = [0, 1, 2, 3, 4, 5];

describe("the matrix's quick line-up (runs in the same order)", () => {
  it("joins the runs by index through the primary key: no temporary B-tree", () => {
    const { path, ids } = store([six.map((i) => example(i, [])), six.map((i) => example(i, [2]))]);
    const db = new Database(path, { readonly: true });
    try {
      const params: Record<string, unknown> = { r0: ids[0], r1: ids[1], p0: '$."accuracy"' };
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sqliteInOrderSql(2, 1, (c) => c, () => "")}`).all(params) as { detail: string }[]).map((p) => p.detail);
      expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
      expect(plan.filter((d) => /USING INDEX sqlite_autoindex_lab_rows_1 \(run_id=\? AND idx=\?\)/.test(d))).toHaveLength(1);
    } finally {
      db.close();
    }
  });

  it("lines three runs up as worked out by hand: same index in each run, the differing scores marked (a missing one counts 0)", async () => {
    const { path, ids } = store([six.map((i) => example(i, [])), six.map((i) => example(i, [2, 4])), six.map((i) => example(i, [4], [5]))]);
    const expected = six.map((i) => ({ id: i === 3 ? "#3" : `ex-${i}`, pos: i, d: [2, 4, 5].includes(i) ? 1 : 0, present: null, i0: i, i1: i, i2: i }));
    expect(await lineUp(path, ids)).toEqual(expected);
    // The general read answers the same.
    expect(generalLineUp(path, ids)).toEqual(expected);
  });

  it("runs in another order, with a row missing, or with an example twice get the general read's answer", async () => {
    // Every example has an id here (a row without one is `#<index>`: at another index it is another example).
    const first = six.map((i) => example(i, [], [], true));
    const layouts: EvaluationRow[][][] = [
      // The second run wrote the same examples in the reverse order (at the reverse indices).
      [first, six.map((i) => ({ ...example(5 - i, [1], [], true), index: i }))],
      // The second run lacks example 5.
      [first, six.slice(0, 5).map((i) => example(i, [1], [], true))],
      // The second run has example 5 at index 6 (a gap at 5): the same count, not the same indices.
      [first, [...six.slice(0, 5).map((i) => example(i, [], [], true)), { ...example(5, [], [], true), index: 6 }]],
      // Both runs hold ex-1 twice (index 2 has ex-1's id).
      [six.map((i) => ({ ...example(i, [], [], true), exampleId: i === 2 ? "ex-1" : `ex-${i}` })), six.map((i) => ({ ...example(i, [0], [], true), exampleId: i === 2 ? "ex-1" : `ex-${i}` }))],
    ];
    for (const runs of layouts) {
      const { path, ids } = store(runs);
      expect(await lineUp(path, ids)).toEqual(generalLineUp(path, ids));
    }
    // The reverse order, worked out by hand: ex-i is at index 5 − i in the second run, wrong there at ex-1.
    const { path, ids } = store(layouts[0]!);
    expect(await lineUp(path, ids)).toEqual(six.map((i) => ({ id: `ex-${i}`, pos: i, d: i === 1 ? 1 : 0, present: null, i0: i, i1: 5 - i })));
  });
});
