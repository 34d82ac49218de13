/**
 * A page of rows never carries a huge stored value whole: an input of 6 MB and an error of 1 MB come
 * cut to their start, marked (`truncated`, each value's whole length), in the JSON listing, the page
 * and a comparison; the example's own page and API give them whole. On both engines.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { startViewer } from "../../lib/view/server.js";
import { fixtureOn, openWriter, removeFixtures, row, viewerEngines } from "./fixture.js";

afterAll(() => removeFixtures());

const BIG = "x".repeat(6 * 1024 * 1024);
const BIG_ERROR = `ProviderError: ${"e".repeat(1024 * 1024)}`;

describe.each(viewerEngines())("long values in a page of rows (%s)", (engine) => {
  it("are cut with a marker in listings and whole on the example's page", async () => {
    const { location, stop } = await fixtureOn(engine);
    const writer = openWriter(engine, location);
    const runId = writer.startRun({ kind: "evaluation", name: "long", config: { metrics: ["accuracy"] } });
    for (let i = 0; i < 3; i++) writer.recordExample(runId, row(i, i === 1 ? { inputs: { text: BIG }, error: BIG_ERROR, prediction: null, scores: { accuracy: 0 } } : {}));
    writer.finishRun(runId, { status: "completed", score: 2 / 3, summary: { metrics: { accuracy: 2 / 3 } } });
    await writer.flush();
    const viewer = await startViewer({ store: location, port: 0 });
    try {
      const listing = await fetch(`${viewer.url}api/runs/${runId}/rows`);
      const text = await listing.text();
      expect(listing.status).toBe(200);
      expect(text.length).toBeLessThan(100_000);
      const rows = (JSON.parse(text) as { rows: { index: number; inputs: unknown; error: string | null; truncated?: Record<string, number> }[] }).rows;
      const long = rows.find((r) => r.index === 1)!;
      const wholeInputs = JSON.stringify({ text: BIG });
      expect(long.truncated).toEqual({ inputs: wholeInputs.length, error: BIG_ERROR.length });
      expect(long.inputs).toEqual({ truncated: true, characters: wholeInputs.length, start: wholeInputs.slice(0, 4096) });
      expect(long.error).toBe(`${BIG_ERROR.slice(0, 4096)}…`);
      expect(rows.find((r) => r.index === 0)!.truncated).toBeUndefined();

      const pageRes = await fetch(`${viewer.url}runs/${runId}`);
      const pageText = await pageRes.text();
      expect(pageRes.status).toBe(200);
      expect(pageText.length).toBeLessThan(100_000);
      // The cut input is shown as fields too (its start read as far as it goes), not as JSON text.
      const cut = /<tr data-example-id="ex-1"[\s\S]*?<\/tr>/.exec(pageText)![0];
      expect(cut).toContain('<div class="field" data-field="text"><span class="name">text:</span> <details class="fold"><summary><span class="v">xxxx');
      expect(cut).toContain(`(${wholeInputs.length} characters in all: the example's page shows it whole)`);
      expect(cut).not.toContain("{&quot;text");
      const failed = await fetch(`${viewer.url}runs/${runId}?failed=1&text=xxxx`);
      expect((await failed.text()).length).toBeLessThan(100_000);

      const one = (await (await fetch(`${viewer.url}api/runs/${runId}/rows/1`)).json()) as { inputs: { text: string }; error: string; truncated?: unknown };
      expect(one.inputs.text).toBe(BIG);
      expect(one.error).toBe(BIG_ERROR);
      expect(one.truncated).toBeUndefined();
      const onePage = await (await fetch(`${viewer.url}runs/${runId}/rows/1`)).text();
      expect(onePage).toContain(BIG);
    } finally {
      await viewer.close();
      await stop();
    }
  }, 180000);
});
