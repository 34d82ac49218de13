/**
 * The file's slow reads run on the query thread, which stops a query whose client went away or that
 * ran past its time: a query that would never end on its own (a recursive count through
 * `typelm_live`) is stopped, and the thread then answers the next read, which it could not while that
 * query went on.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { QueryThread } from "../../lib/view/query-thread.js";
import { QueryTimeout } from "../../lib/view/data/source.js";
import { buildFixture, removeFixtures } from "./fixture.js";

afterAll(() => removeFixtures());

/** Counts forever: every step calls typelm_live, as the viewer's slow reads do for each row. */
const ENDLESS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE typelm_live(i)) SELECT count(*) AS n FROM n";

describe("the query thread", () => {
  it("stops a query whose client went away, then answers the next", async () => {
    const fixture = await buildFixture();
    const thread = new QueryThread(fixture.path, 600_000);
    try {
      // The worker is up and has its connection before the endless query starts.
      expect(await thread.read<{ n: number }>("SELECT count(*) AS n FROM lab_runs", {}, true)).toEqual([{ n: 5 }]);
      const gone = new AbortController();
      const endless = thread.read(ENDLESS, {}, true, gone.signal).then(() => "ended", (e: unknown) => e);
      // Queued behind the endless query: answered only once it has been stopped.
      const next = thread.read<{ n: number }>("SELECT count(*) AS n FROM lab_runs", {}, true);
      gone.abort(new Error("the request was abandoned"));
      expect(((await endless) as Error).message).toBe("the request was abandoned");
      expect(await next).toEqual([{ n: 5 }]);
    } finally {
      await thread.close();
    }
  }, 120000);

  it("stops a query past its time with QueryTimeout, then answers the next", async () => {
    const fixture = await buildFixture();
    const thread = new QueryThread(fixture.path, 1000);
    try {
      const endless = await thread.read(ENDLESS, {}, true).then(() => "ended", (e: unknown) => e);
      expect(endless).toBeInstanceOf(QueryTimeout);
      expect((endless as Error).message).toMatch(/^the query took longer than 1 s, the viewer's limit for one query, and was stopped/);
      // The next read (with a limit of its own, so a loaded machine cannot fail it) is answered: the endless one was stopped.
      expect(await thread.read<{ n: number }>("SELECT count(*) AS n FROM lab_runs", {}, true, undefined, 600_000)).toEqual([{ n: 5 }]);
    } finally {
      await thread.close();
    }
  }, 120000);
});
