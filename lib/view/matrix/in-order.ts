// The matrix's quick line-up, for the usual runs: runs of one test set written in the same order, so
// that each index holds the same example in every run. Then the runs' rows are joined by index through
// the primary key (no grouping or sorting of every row by example id, which the general read in
// sql.ts does), and the answer is the same line-up: the first run's order, each example at the
// same index in every run. When the runs are not like that (another order, a missing or extra row, an
// example twice), `inOrderLineUp` says so and the general read answers (with its sentence on a 400).
import type { LineUpRow } from "./sql.js";

/** One index of the runs joined by index: its example id (`#<index>` without one), whether every run has that id there, whether the scores differ. */
export interface InOrderRow {
  /** The index, the same in every run. */
  idx: number;
  /** The first run's example id there (`#<index>` for a row without one). */
  id: string;
  /** 1 when every run's row at this index has the first run's example id. */
  same: number;
  /** 1 when the runs' scores on a shared metric differ (a missing score counts 0). */
  d: number;
}

/**
 * SQLite: the runs' rows joined by index, in the first run's index order. Parameters `@r0`… (each
 * run) and `@p0`… (each metric's JSON path); `json` reads a JSON column, `live` is the query thread's
 * per-row check of the first run's index (empty off the thread).
 */
export function sqliteInOrderSql(runs: number, metrics: number, json: (column: string) => string, live: (idx: string) => string): string {
  const id = (t: string) => `coalesce(${t}.example_id, '#' || ${t}.idx)`;
  const joins = Array.from({ length: runs - 1 }, (_, j) => ` JOIN lab_rows t${j + 1} ON t${j + 1}.run_id = @r${j + 1} AND t${j + 1}.idx = t0.idx`).join("");
  const same = Array.from({ length: runs - 1 }, (_, j) => `${id(`t${j + 1}`)} = ${id("t0")}`).join(" AND ");
  const score = (j: number, i: number) => `coalesce(json_extract(${json(`t${j}.scores_json`)}, @p${i}), 0)`;
  const differ = Array.from({ length: metrics }, (_, i) => `NOT (${Array.from({ length: runs - 1 }, (_, j) => `${score(j + 1, i)} = ${score(0, i)}`).join(" AND ")})`).join(" OR ");
  const check = live("t0.idx");
  return `SELECT t0.idx AS idx, ${id("t0")} AS id, (${same}) AS same, (${differ}) AS d FROM lab_rows t0${joins}
    WHERE t0.run_id = @r0${check === "" ? "" : ` AND ${check}`} ORDER BY t0.idx`;
}

/**
 * The line-up from the runs joined by index, when it is the whole line-up: every row of every run
 * joined (`counts`: each run's rows), each index holding the same example in every run, each example
 * once. Undefined otherwise (the general read answers).
 */
export function inOrderLineUp(found: readonly InOrderRow[], counts: readonly number[]): LineUpRow[] | undefined {
  if (counts.some((c) => c !== found.length)) return undefined;
  const seen = new Set<string>();
  const rows: LineUpRow[] = [];
  for (const r of found) {
    if (Number(r.same) !== 1 || seen.has(r.id)) return undefined;
    seen.add(r.id);
    const row: LineUpRow = { id: r.id, pos: r.idx, d: Number(r.d), present: null };
    for (let j = 0; j < counts.length; j++) row[`i${j}`] = r.idx;
    rows.push(row);
  }
  return rows;
}
