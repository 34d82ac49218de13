/**
 * A stored value that is not valid JSON (changed outside typelm) is shown as missing on both engines:
 * the evaluation page, its filters and sorts, the JSON API, one example, a comparison and a matrix answer 200,
 * with the same rows on the file as on PostgreSQL.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { createRequire } from "node:module";
import pg from "pg";
import { startViewer } from "../../lib/view/server.js";
import { fixtureOn, removeFixtures, viewerEngines, type Engine } from "./fixture.js";

afterAll(() => removeFixtures());

const BAD = { scores_json: '{"accuracy":', expected_json: "{bad", inputs_json: "not json at all", prediction_json: "[1," };

/** Writes the malformed values into example 3 of run `runId`, with the engine's own client. */
async function corrupt(engine: Engine, location: string, runId: string): Promise<void> {
  const sets = Object.keys(BAD);
  if (engine === "sqlite") {
    const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
    const db = new Database(location);
    db.prepare(`UPDATE lab_rows SET ${sets.map((c) => `${c} = @${c}`).join(", ")} WHERE run_id = @run AND idx = 3`).run({ ...BAD, run: runId });
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    await client.query(`UPDATE lab_rows SET ${sets.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE run_id = $1 AND idx = 3`, [runId, ...Object.values(BAD)]);
  } finally {
    await client.end();
  }
}

describe.each(viewerEngines())("a malformed stored value (%s)", (engine) => {
  it("is shown as missing: every page and filter answers, the same on both engines", async () => {
    const { fixture, location, stop } = await fixtureOn(engine);
    await corrupt(engine, location, fixture.evalA);
    const viewer = await startViewer({ store: location, port: 0 });
    try {
      const a = fixture.evalA;
      const get = async (path: string) => {
        const res = await fetch(`${viewer.url}${path}`);
        const body = await res.text();
        return { status: res.status, body };
      };
      for (const path of [
        `runs/${a}`, `runs/${a}?label=negative`, `runs/${a}?sort=score`, `runs/${a}?max=0.5`, `runs/${a}?text=sentence`,
        `runs/${a}/rows/3`, `compare/${a}/${fixture.evalB}`, `api/runs/${a}`, `api/compare/${a}/${fixture.evalB}`,
        `matrix?runs=${a},${fixture.evalB}`, `api/matrix?runs=${a},${fixture.evalB}&disagree=1`, `matrix/tests?runs=${a},${fixture.evalB}`,
      ]) {
        const got = await get(path);
        expect({ path, status: got.status }).toEqual({ path, status: 200 });
      }
      // The example with the malformed values: its scores missing, so a score filter leaves it out and a label filter too.
      const rows = async (query: string) => ((await (await fetch(`${viewer.url}api/runs/${a}/rows?size=500&${query}`)).json()) as { rows: { index: number }[] }).rows.map((r) => r.index);
      expect(await rows("")).toContain(3);
      expect(await rows("max=0.5")).not.toContain(3);
      expect(await rows("label=negative")).not.toContain(3);
      const one = (await (await fetch(`${viewer.url}api/runs/${a}/rows/3`)).json()) as { scores: unknown; expected: unknown };
      expect(one.scores).toEqual({});
      expect(one.expected).toEqual({});
    } finally {
      await viewer.close();
      await stop();
    }
  }, 120000);
});
