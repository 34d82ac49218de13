// The matrix's one read over every row of its runs, in SQL on either engine: the runs' rows grouped by
// example id (a row without one is `#<index>`), in the first run's index order, with whether the runs'
// scores on the shared metrics differ (a missing score counts 0, as a comparison counts it) and, for an
// example not in every run exactly once, the runs that hold it. The file's runs on the query thread
// (queries.ts), PostgreSQL's on its sessions for slow reads (pg-source.ts).

/** One example of a matrix's runs, as the line-up read returns it. */
export interface LineUpRow {
  /** Its index in each run (`i0` the first run's, …); null in a run that lacks it. */
  [run: `i${number}`]: number | string | null;
  /** The example id (`#<index>` for a row without one). */
  id: string;
  /** Its index in the first run; null when the first run lacks it. */
  pos: number | null;
  /** 1 when the runs' scores on a shared metric differ. */
  d: number;
  /** For an example not in every run exactly once: the runs holding it, comma-separated (else null). */
  present: string | null;
}

/**
 * SQLite: parameters `@runs` (the run ids as a JSON array), `@r0`… (each run), `@first`, `@k` (how many runs) and `@p0`…
 * (each metric's JSON path); `json` reads a JSON column (as it is, or NULL when it is not valid JSON),
 * `live` is the query thread's per-row check (empty off the thread).
 */
export function sqliteLineUpSql(runs: number, metrics: number, json: (column: string) => string, live: string): string {
  const indices = Array.from({ length: runs }, (_, j) => `, min(CASE WHEN run_id = @r${j} THEN idx END) AS i${j}`).join("");
  const scores = Array.from({ length: metrics }, (_, i) => `, coalesce(json_extract(${json("scores_json")}, @p${i}), 0) AS s${i}`).join("");
  const differ = Array.from({ length: metrics }, (_, i) => `min(s${i}) <> max(s${i})`).join(" OR ");
  return `SELECT id, min(CASE WHEN run_id = @first THEN idx END) AS pos, (${differ}) AS d${indices},
    CASE WHEN count(*) <> @k OR count(DISTINCT run_id) <> @k THEN group_concat(DISTINCT run_id) END AS present
    FROM (SELECT run_id, idx, coalesce(example_id, '#' || idx) AS id${scores} FROM lab_rows
      WHERE run_id IN (SELECT value FROM json_each(@runs))${live === "" ? "" : ` AND ${live}`})
    GROUP BY id ORDER BY pos IS NULL, pos`;
}

/**
 * PostgreSQL: parameters $1 (the run ids, text[]), $2 (the first), $3 (how many runs) and $4… (the
 * metrics); `score(param)` is a row's score of the metric in that parameter (NULL when missing).
 */
export function postgresLineUpSql(runs: number, metrics: number, score: (param: string) => string): string {
  const indices = Array.from({ length: runs }, (_, j) => `, min(idx) FILTER (WHERE run_id = ($1::text[])[${j + 1}]) AS i${j}`).join("");
  const scores = Array.from({ length: metrics }, (_, i) => `, coalesce(${score(`$${i + 4}`)}, 0) AS s${i}`).join("");
  const differ = Array.from({ length: metrics }, (_, i) => `min(s${i}) <> max(s${i})`).join(" OR ");
  return `SELECT id, min(CASE WHEN run_id = $2 THEN idx END) AS pos, (${differ})::int AS d${indices},
    CASE WHEN count(*) <> $3 OR count(DISTINCT run_id) <> $3 THEN string_agg(DISTINCT run_id, ',') END AS present
    FROM (SELECT run_id, idx, coalesce(example_id, '#' || idx) AS id${scores} FROM lab_rows WHERE run_id = ANY($1::text[])) r
    GROUP BY id ORDER BY pos NULLS LAST`;
}
