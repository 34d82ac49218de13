import { describe, expect, it } from "@jest/globals";
import { FewShotExample, Image, loadDataset, Predict } from "../../lib/index.js";
import { picturesIn, SHAPES_CAREFUL_PHRASE, SimulatedShapesLM, shapesTable, simulatedCount } from "../../lib/testing/index.js";

type Split = Awaited<ReturnType<typeof loadDataset>>;

async function accuracy(lm: SimulatedShapesLM, ds: Split, instruction: string | undefined, demos: FewShotExample[]): Promise<number> {
  const p = new Predict(ds.signature!, { ...(instruction === undefined ? {} : { instruction }), demos });
  let right = 0;
  for (const ex of ds.test) if ((await p.call(ex.input, { lm })).count === ex.output.count) right++;
  return right / ds.test.length;
}

describe("the simulated shapes model", () => {
  it("misses shapes by the documented rule (hand-worked cases)", () => {
    // hash "80000000…": u = 0.5. Without help t = 0.7: a miss of one (u ≥ t/3 = 0.233).
    expect(simulatedCount(5, "80000000", false, 0)).toEqual({ answer: 4, threshold: 0.7, u: 0.5 });
    // Careful: t = 0.3, u = 0.5 ≥ t: right.
    expect(simulatedCount(5, "80000000", true, 0).answer).toBe(5);
    // u = 0.125 ("20000000"), without help: u < 0.7/3, a miss of two.
    expect(simulatedCount(6, "20000000", false, 0).answer).toBe(4);
    // Careful with two crowded demos: t = 0.3 × 0.35 = 0.105; u = 0.125 is above it: right.
    expect(simulatedCount(6, "20000000", true, 2).answer).toBe(6);
    // One crowded demo, careful: t = 0.18 > 0.125: a miss of one only.
    expect(simulatedCount(6, "20000000", true, 1).answer).toBe(5);
    // 1 or 2 shapes are always right.
    expect(simulatedCount(2, "00000000", false, 0).answer).toBe(2);
  });

  it("scores higher with the careful instruction and crowded demos than with neither", async () => {
    const ds = await loadDataset("shapes");
    const lm = new SimulatedShapesLM({ counts: shapesTable([...ds.train, ...ds.dev, ...ds.test]) });
    const crowded = ds.train.filter((e) => (e.output.count as number) >= 5).slice(0, 2);
    const plain = await accuracy(lm, ds, undefined, []);
    const careful = await accuracy(lm, ds, `Count the shapes ${SHAPES_CAREFUL_PHRASE}.`, []);
    const both = await accuracy(lm, ds, `Count the shapes ${SHAPES_CAREFUL_PHRASE}.`, crowded);
    // The model saw the demos' pictures: every call with demos counted two crowded demo pictures.
    expect(lm.counted.slice(-ds.test.length).every((c) => c.crowdedDemos === 2 && c.careful)).toBe(true);
    expect(crowded.every((d) => d.input.image instanceof Image)).toBe(true);
    expect(careful).toBeGreaterThan(plain + 0.1);
    expect(both).toBeGreaterThan(careful + 0.05);
  });
});

describe("where the simulated shapes model finds pictures", () => {
  it("reads them as Image values, base64 or data URLs, bytes as JSON numbers and sha256 texts, in order", async () => {
    const ds = await loadDataset("shapes");
    const [a, b, c, d] = ds.train.slice(0, 4).map((e) => e.input.image as Image);
    const messages = [
      { role: "system", content: `demo: {"image":${JSON.stringify({ ...Array.from(a!.bytes!) })}} then data:image/png;base64,${b!.base64}` },
      { role: "user", content: [{ type: "text", text: `label [image image/png sha256:${c!.sha256.slice(0, 12)}…]` }, { type: "image", value: d }] },
    ];
    expect(picturesIn(messages)).toEqual([a!.sha256, b!.sha256, c!.sha256.slice(0, 12), d!.sha256]);
  });
});
