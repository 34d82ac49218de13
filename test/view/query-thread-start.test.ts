/**
 * The viewer on a file starts its query thread when it starts, before any slow read (the first, a
 * matrix's line-up say, then does not wait for the worker to start), and a thread started ahead
 * answers reads as one started by its first read does.
 */
import { afterAll, describe, expect, it, jest } from "@jest/globals";
import { QueryThread } from "../../lib/view/query-thread.js";
import { startViewer } from "../../lib/view/server.js";
import { buildFixture, removeFixtures } from "./fixture.js";

afterAll(() => removeFixtures());

describe("the query thread started ahead", () => {
  it("is started by the viewer before any request", async () => {
    const fixture = await buildFixture();
    const start = jest.spyOn(QueryThread.prototype, "start");
    const viewer = await startViewer({ store: fixture.path, port: 0 });
    try {
      expect(start).toHaveBeenCalledTimes(1);
    } finally {
      start.mockRestore();
      await viewer.close();
    }
  }, 60000);

  it("answers reads once started ahead", async () => {
    const fixture = await buildFixture();
    const thread = new QueryThread(fixture.path, 600_000);
    try {
      thread.start();
      // Started twice: still the one worker.
      thread.start();
      expect(await thread.read<{ n: number }>("SELECT count(*) AS n FROM lab_runs", {}, true)).toEqual([{ n: 5 }]);
    } finally {
      await thread.close();
    }
  }, 60000);
});
