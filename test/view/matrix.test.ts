/**
 * The viewer's matrix over HTTP, on the file and on the same lab in PostgreSQL: three evaluations of
 * the same examples side by side, lined up by example id (one run was written in another order), the
 * examples where their scores differ marked and filtered on the server, paged; each run's metric with
 * the interval of its own page; every pair tested as `typelm compare` tests two runs, Holm-adjusted over
 * the pairs (checked against the exact binomial tails and Holm's steps worked out here); and a sentence
 * with a 400 or 404 for runs that cannot make a matrix.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { closeStoreSync } from "../../lib/store/db.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { openWriter, removeFixtures, row, viewerEngines } from "./fixture.js";
import { disagreeing, EXAMPLES, matrixFixture, WRONG, type MatrixFixture } from "./matrix-fixture.js";

interface MatrixJson {
  runs: { id: string }[];
  metrics: { name: string; value: number; ci: [number, number]; method: string }[][];
  shared: string[];
  examples: number;
  disagreeing: number;
  total: number;
  rows: { exampleId: string; disagree: boolean; cells: { index: number; exampleId: string; scores: Record<string, number>; error: string | null }[] }[];
}

interface TestsJson {
  tests: { runA: string; runB: string; metric: string; n: number; diff: number; pValue: number; pAdjusted: number; test: string; better: string[]; worse: string[] }[];
}

/** C(n, k) as a float (n ≤ 40 here). */
function choose(n: number, k: number): number {
  let c = 1;
  for (let j = 1; j <= k; j++) c = (c * (n - k + j)) / j;
  return c;
}

/** The exact McNemar p-value worked out from the binomial tails: min(1, 2·P(X ≤ min(b, c))), X ~ Bin(b + c, 1/2). */
function mcnemarP(b: number, c: number): number {
  const m = b + c;
  if (m === 0) return 1;
  let tail = 0;
  for (let k = 0; k <= Math.min(b, c); k++) tail += choose(m, k) / 2 ** m;
  return Math.min(1, 2 * tail);
}

describe.each(viewerEngines())("the matrix of runs (%s)", (engine) => {
  let m: MatrixFixture;
  let viewer: Viewer;

  beforeAll(async () => {
    m = await matrixFixture(engine);
    viewer = await startViewer({ store: m.location, port: 0 });
  }, 60000);

  afterAll(async () => {
    await viewer?.close();
    await m?.stop();
    if (m !== undefined) closeStoreSync(m.fixture.path);
    removeFixtures();
  }, 30000);

  const get = (path: string) => fetch(viewer.url + path.replace(/^\//, ""));
  const json = async <T>(path: string): Promise<T> => {
    const res = await get(path);
    expect(res.status).toBe(200);
    return await res.json() as T;
  };

  it("lines the runs up by example id, marks the examples whose scores differ, and pages", async () => {
    const runs = m.runs.join(",");
    const all = await json<MatrixJson>(`/api/matrix?runs=${runs}&size=100`);
    expect(all.runs.map((r) => r.id)).toEqual(m.runs);
    expect(all.examples).toBe(EXAMPLES);
    expect(all.rows.map((r) => r.exampleId)).toEqual(Array.from({ length: EXAMPLES }, (_, i) => `ex-${i}`));
    const expected = disagreeing();
    expect(all.disagreeing).toBe(expected.length);
    expect(all.rows.filter((r) => r.disagree).map((r) => r.exampleId)).toEqual(expected.map((i) => `ex-${i}`));
    // The second run was written last example first: its row of ex-3 is index 36.
    const ex3 = all.rows[3]!;
    expect(ex3.cells.map((c) => c.exampleId)).toEqual(["ex-3", "ex-3", "ex-3"]);
    expect(ex3.cells.map((c) => c.index)).toEqual([3, EXAMPLES - 1 - 3, 3]);
    for (const [i, r] of all.rows.entries()) {
      expect(r.cells.map((c) => c.scores["accuracy"])).toEqual([WRONG.first(i), WRONG.second(i), WRONG.third(i)].map((w) => (w ? 0 : 1)));
    }
    expect(all.rows[7]!.cells[2]!.error).toBe("ProviderError: 503 Service Unavailable");

    // The runs page's form without script sends the ticked runs as repeated parameters.
    const repeated = await json<MatrixJson>(`/api/matrix?${m.runs.map((id) => `runs=${id}`).join("&")}&size=100`);
    expect(repeated.runs.map((r) => r.id)).toEqual(m.runs);
    expect(repeated.rows).toEqual(all.rows);

    const second = await json<MatrixJson>(`/api/matrix?runs=${runs}&size=10&page=2`);
    expect(second.total).toBe(EXAMPLES);
    expect(second.rows.map((r) => r.exampleId)).toEqual(Array.from({ length: 10 }, (_, i) => `ex-${i + 10}`));

    const only = await json<MatrixJson>(`/api/matrix?runs=${runs}&disagree=1&size=5&page=2`);
    expect(only.total).toBe(expected.length);
    expect(only.rows.map((r) => r.exampleId)).toEqual(expected.slice(5, 10).map((i) => `ex-${i}`));
    expect(only.rows.every((r) => r.disagree)).toBe(true);
  });

  it("the page marks tr[data-disagree], filters with ?disagree=1, and shows each run's metric with its page's interval", async () => {
    const runs = m.runs.join(",");
    const page = await (await get(`/matrix?runs=${runs}&size=100`)).text();
    const rows = [...page.matchAll(/<tr data-example-id="([^"]+)"( data-disagree="1")?>/g)];
    expect(rows).toHaveLength(EXAMPLES);
    expect(rows.filter((r) => r[2] !== undefined).map((r) => r[1])).toEqual(disagreeing().map((i) => `ex-${i}`));
    // Values as fields (name: value), never JSON text: inputs, expected and each run's prediction.
    expect(page).toContain('data-field="sentence"');
    expect(page).toContain('data-field="sentiment"');
    expect(page).not.toMatch(/\{(&quot;|")sentiment/);
    const filtered = await (await get(`/matrix?runs=${runs}&disagree=1&size=100`)).text();
    const shown = [...filtered.matchAll(/<tr data-example-id="([^"]+)"( data-disagree="1")?>/g)];
    expect(shown.map((r) => r[1])).toEqual(disagreeing().map((i) => `ex-${i}`));
    expect(shown.every((r) => r[2] !== undefined)).toBe(true);
    const top = await json<MatrixJson>(`/api/matrix?runs=${runs}&size=1`);
    for (const [i, id] of m.runs.entries()) {
      // The run's own page's metric line: the same value, interval and method.
      const own = await json<{ metrics: unknown[] }>(`/api/runs/${id}`);
      expect(top.metrics[i]).toEqual(own.metrics);
      const right = Array.from({ length: EXAMPLES }, (_, k) => k).filter((k) => ![WRONG.first, WRONG.second, WRONG.third][i]!(k)).length;
      expect(top.metrics[i]![0]!.value).toBeCloseTo(right / EXAMPLES, 12);
      expect(page).toContain(`data-metric="accuracy" data-run="${id}">${(right / EXAMPLES).toFixed(3)}<`);
    }
  });

  it("tests every pair as compare does, with Holm's adjustment over the pairs", async () => {
    const result = await json<TestsJson>(`/api/matrix/tests?runs=${m.runs.join(",")}`);
    const wrong = [WRONG.first, WRONG.second, WRONG.third];
    const pairs = [[0, 1], [0, 2], [1, 2]] as const;
    expect(result.tests.map((t) => [t.runA, t.runB])).toEqual(pairs.map(([a, b]) => [m.runs[a], m.runs[b]]));
    const p: number[] = [];
    for (const [k, [a, b]] of pairs.entries()) {
      let better = 0, worse = 0;
      for (let i = 0; i < EXAMPLES; i++) {
        if (wrong[a]!(i) && !wrong[b]!(i)) better++;
        if (!wrong[a]!(i) && wrong[b]!(i)) worse++;
      }
      const t = result.tests[k]!;
      expect(t.test).toBe("mcnemar-exact");
      expect(t.n).toBe(EXAMPLES);
      expect([t.better.length, t.worse.length]).toEqual([better, worse]);
      expect(t.diff).toBeCloseTo((better - worse) / EXAMPLES, 12);
      expect(t.pValue).toBeCloseTo(mcnemarP(better, worse), 12);
      p.push(mcnemarP(better, worse));
    }
    // Holm's steps over the three p-values: the i-th smallest times (3 − i), never below the one before, at most 1.
    const order = [0, 1, 2].sort((x, y) => p[x]! - p[y]! || x - y);
    const holm: number[] = [];
    let running = 0;
    order.forEach((k, rank) => { running = Math.max(running, Math.min(1, (3 - rank) * p[k]!)); holm[k] = running; });
    expect(result.tests.map((t) => t.pAdjusted)).toEqual(holm.map((h) => expect.closeTo(h, 12)));
    const page = await (await get(`/matrix/tests?runs=${m.runs.join(",")}`)).text();
    expect(page.match(/<tr data-pair=/g)).toHaveLength(3);
  });

  it("answers runs that cannot make a matrix with a sentence: 400 or 404", async () => {
    const runs = m.runs.join(",");
    const sentence = async (path: string, status: number, words: RegExp) => {
      const res = await get(path);
      expect(res.status).toBe(status);
      expect((await res.json() as { error: string }).error).toMatch(words);
    };
    await sentence(`/api/matrix?runs=${m.runs[0]}`, 400, /two or more evaluation runs.*received one/);
    await sentence(`/api/matrix`, 400, /two or more evaluation runs.*received none/);
    await sentence(`/api/matrix?runs=${runs},${m.otherSet}`, 400, /not over the same examples: "ex-\d+" is in run [0-9a-f]{8} \(.*\) but not in run [0-9a-f]{8} \(/);
    await sentence(`/api/matrix/tests?runs=${m.runs[0]},${m.otherSet}`, 400, /not over the same examples/);
    await sentence(`/api/matrix?runs=${runs},ffffffffdeadbeef`, 404, /no run whose id is or starts with "ffffffffdeadbeef"/);
    await sentence(`/api/matrix?runs=${m.runs[0]},${m.fixture.optimization}`, 400, /is an optimization run; a matrix shows evaluation runs/);
    await sentence(`/api/matrix?runs=${m.runs[0]},${m.runs[0]}`, 400, /given twice/);
    const page = await get(`/matrix?runs=${m.runs[0]},${m.otherSet}`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("are not over the same examples");
  });

  it("a run holding an example twice cannot be lined up: a 400 that says so", async () => {
    const writer = openWriter(engine, m.location);
    const twice = writer.startRun({ kind: "evaluation", name: "twice", config: { metrics: ["accuracy"] } });
    for (let i = 0; i < EXAMPLES; i++) writer.recordExample(twice, row(i, i === 1 ? { exampleId: "ex-0" } : {}));
    writer.finishRun(twice, { status: "completed", score: 1, summary: { metrics: { accuracy: 1 } } });
    await writer.flush();
    const res = await get(`/api/matrix?runs=${m.runs[0]},${twice}`);
    expect(res.status).toBe(400);
    expect((await res.json() as { error: string }).error).toMatch(/a run holds example "ex-0" more than once; a matrix lines runs up by example id/);
  });

  it("the runs page has a checkbox per run and the compare link", async () => {
    const page = await (await get("/")).text();
    for (const id of [...m.runs, m.otherSet, m.fixture.evalA]) expect(page).toContain(`data-select-run="${id}"`);
    expect(page).toMatch(/<a data-compare href="\/matrix"/);
  });
});

describe("the matrix's line-up on the file", () => {
  it("is read on the query thread: past the viewer's time limit for one query the answer is a 503 with a sentence", async () => {
    const m = await matrixFixture("sqlite");
    const viewer = await startViewer({ store: m.location, port: 0, queryTimeoutMs: 1 });
    try {
      const res = await fetch(`${viewer.url}api/matrix?runs=${m.runs.join(",")}`);
      expect(res.status).toBe(503);
      expect((await res.json() as { error: string }).error).toMatch(/took longer than 0.001 s/);
      // The runs page, read on the server's own connection, is not bounded that way.
      expect((await fetch(viewer.url)).status).toBe(200);
    } finally {
      await viewer.close();
      closeStoreSync(m.fixture.path);
      removeFixtures();
    }
  }, 30000);
});
