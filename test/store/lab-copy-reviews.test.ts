// `typelm lab copy` carries people's reviews (the review queue's annotations) and users' feedback on
// traces (lab_feedback) both ways, SQLite -> PostgreSQL -> SQLite (a real server this suite starts):
// every record reads back equal and in order, so a row's latest review stays its latest; copying again
// adds nothing; a review older than the destination's latest of the same row is left out.
import { describe, expect, it } from "@jest/globals";
import { copyLab, copyReportText } from "../../lib/store/copy/lab-copy.js";
import { openStoreSync } from "../../lib/store/db.js";
import { listAnnotations } from "../../lib/store/annotations/annotations.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { bothEngines, sqlOn } from "./lab-engines.js";

const { sqlite, postgres, withPostgres } = bothEngines("lab copy of reviews and feedback");

const REVIEWS = [
  ["run-1", "e1", "fail", null, "first look", "ann", "2026-01-01T00:00:01.000Z"],
  ["run-1", "e2", "fail", '{"answer":"right"}', "corrected", "ann", "2026-01-01T00:00:02.000Z"],
  ["run-1", "e1", "pass", null, null, "bob", "2026-01-01T00:00:03.000Z"],
];
const FEEDBACK = [
  ["trace-a", 0, "wrong amount", "2026-01-01T00:00:04.000Z"],
  ["trace-b", 1, null, "2026-01-01T00:00:05.000Z"],
];
const A_COLUMNS = "run_id, example_id, verdict, expected_json, note, reviewer, created_at";
const F_COLUMNS = "trace_id, score, comment, created_at";
const asRecords = (cols: string, rows: unknown[][]) => rows.map((r) => Object.fromEntries(cols.split(", ").map((c, i) => [c, r[i]])));

(withPostgres ? describe : describe.skip)("lab copy: annotations and lab_feedback", () => {
  it("SQLite -> PostgreSQL -> SQLite: the reviews and feedback read back equal and in order; copying again adds nothing", async () => {
    const source = sqlite.fresh();
    const team = postgres.fresh();
    const back = sqlite.fresh();
    const db = openStoreSync(source);
    for (const r of REVIEWS) db.prepare(`INSERT INTO annotations (${A_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(...r);
    for (const f of FEEDBACK) db.prepare(`INSERT INTO lab_feedback (${F_COLUMNS}) VALUES (?, ?, ?, ?)`).run(...f);

    const there = await copyLab(source, team);
    expect([there.annotations, there.feedback]).toEqual([3, 2]);
    expect(copyReportText(there)).toContain("reviews: 3 added; users' feedback: 2 added\n");
    expect(await sqlOn(team, `SELECT ${A_COLUMNS} FROM annotations ORDER BY id`)).toEqual(asRecords(A_COLUMNS, REVIEWS));
    expect(await sqlOn(team, `SELECT ${F_COLUMNS} FROM lab_feedback ORDER BY seq`)).toEqual(asRecords(F_COLUMNS, FEEDBACK));

    const returned = await copyLab(team, back);
    expect([returned.annotations, returned.feedback]).toEqual([3, 2]);
    const file = openStoreSync(back);
    expect(file.prepare(`SELECT ${A_COLUMNS} FROM annotations ORDER BY id`).all()).toEqual(asRecords(A_COLUMNS, REVIEWS));
    expect(file.prepare(`SELECT ${F_COLUMNS} FROM lab_feedback ORDER BY rowid`).all()).toEqual(asRecords(F_COLUMNS, FEEDBACK));
    // The latest review of e1 is still bob's pass.
    const latest = await listAnnotations(LabStore.open(back), "run-1");
    expect(latest.map((a) => [a.exampleId, a.verdict])).toEqual([["e2", "fail"], ["e1", "pass"]]);

    const again = await copyLab(source, team);
    const againBack = await copyLab(team, back);
    expect([again.annotations, again.feedback, againBack.annotations, againBack.feedback]).toEqual([undefined, undefined, undefined, undefined]);
    expect(copyReportText(again)).not.toContain("reviews:");
    expect(await sqlOn(team, "SELECT (SELECT COUNT(*)::int FROM annotations) AS a, (SELECT COUNT(*)::int FROM lab_feedback) AS f")).toEqual([{ a: 3, f: 2 }]);
  }, 60_000);

  it("leaves out a review older than the destination's latest review of the same row", async () => {
    const source = sqlite.fresh();
    const team = postgres.fresh();
    openStoreSync(source).prepare(`INSERT INTO annotations (${A_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run("run-1", "e1", "fail", null, null, "ann", "2026-01-01T00:00:01.000Z");
    const empty = sqlite.fresh();
    openStoreSync(empty);
    await copyLab(empty, team);   // creates the team's tables
    await sqlOn(team, `INSERT INTO annotations (${A_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, ["run-1", "e1", "pass", null, null, "bob", "2026-01-02T00:00:00.000Z"]);
    const report = await copyLab(source, team);
    expect(report.annotations).toBeUndefined();
    expect(await sqlOn(team, "SELECT verdict, reviewer FROM annotations ORDER BY id")).toEqual([{ verdict: "pass", reviewer: "bob" }]);
  }, 60_000);
});
