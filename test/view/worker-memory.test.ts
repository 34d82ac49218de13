/**
 * The viewer's statistics worker has a heap limit sized to its jobs (so that a large comparison's
 * garbage is collected as it goes): a larger job starts a larger worker, and a job that outgrows the
 * limit fails with a clear error after which the next is allowed twice as much, and succeeds.
 */
import { afterEach, describe, expect, it } from "@jest/globals";
import { IntervalWorker } from "../../lib/view/intervals.js";
import type { PackedRun } from "../../lib/view/interval-worker.js";

/** A graded run of `n` rows paired by position (no ids): scores 0, 0.5 and 1, shifted by `shift`. */
function packed(n: number, shift: number): PackedRun {
  return { n, metrics: { quality: 0.5 }, scores: { quality: Float64Array.from({ length: n }, (_, i) => [0, 0.5, 1][(i + shift) % 3]!) } };
}

describe("the viewer's statistics worker's memory", () => {
  const workers: IntervalWorker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()));
  });

  it("a job larger than the worker's limit starts a larger worker; the smaller one ends", async () => {
    const worker = new IntervalWorker();
    workers.push(worker);
    await worker.meanInterval(Float64Array.from({ length: 1000 }, (_, i) => i % 2));
    expect(worker.limits).toEqual([64]);
    const [c] = await worker.compare(packed(2000, 0), packed(2000, 1), ["quality"]);
    expect(c).toMatchObject({ metric: "quality", n: 2000, test: "sign-flip" });
    // 64 MB and 500 bytes for each of the 4,000 rows read.
    expect(worker.limits).toEqual([Math.ceil(64 + (4000 * 500) / 2 ** 20)]);
    // A smaller job goes to the larger worker.
    await worker.meanInterval(Float64Array.from({ length: 10 }, (_, i) => i % 2));
    expect(worker.limits).toEqual([Math.ceil(64 + (4000 * 500) / 2 ** 20)]);
  }, 60000);

  it("a job asked just after an idle worker was told to end goes to a new worker, not to the ending one", async () => {
    const worker = new IntervalWorker({ idleMs: 0 });
    workers.push(worker);
    const scores = () => Float64Array.from({ length: 1000 }, (_, i) => i % 2);
    const first = await worker.meanInterval(scores());
    // The idle timer was set when the answer came; this timer fires after it, once the worker was told
    // to end and before it has exited (its exit is seen later, in the event loop's poll phase).
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The ending worker would exit with this job waiting: "the interval worker stopped (exit code 1)".
    expect(await worker.meanInterval(scores())).toEqual(first);
  }, 60000);

  it("a job that runs out of its memory fails with a clear error; asked again with more, it is answered", async () => {
    const tight = new IntervalWorker({ baseMb: 4, bytesPerRow: 4 });
    const ample = new IntervalWorker();
    workers.push(tight, ample);
    const n = 30_000;
    await expect(tight.compare(packed(n, 0), packed(n, 1), ["quality"])).rejects.toThrow(/^the viewer's statistics ran out of the memory allowed to them \(5 MB\); asked again, they are allowed twice as much$/);
    let answer: unknown;
    const failures: string[] = [];
    for (let attempt = 0; attempt < 6 && answer === undefined; attempt++) {
      try {
        answer = await tight.compare(packed(n, 0), packed(n, 1), ["quality"]);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    // Each failure allowed the next twice as much, until the job fit.
    expect(failures.every((m, i) => m.includes(`(${Math.ceil(2 ** (i + 1) * (4 + (2 * n * 4) / 2 ** 20))} MB)`))).toBe(true);
    expect(answer).toBeDefined();
    // The same comparison as with room to spare.
    expect(answer).toEqual(await ample.compare(packed(n, 0), packed(n, 1), ["quality"]));
  }, 120000);
});
