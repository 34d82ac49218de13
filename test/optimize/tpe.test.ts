import { describe, it, expect } from "@jest/globals";
import { Random } from "../../lib/random.js";
import { CategoricalTPE, type Observation } from "../../lib/optimize/tpe.js";

describe("Random", () => {
  it("repeats its sequence for the same seed and stream, and differs across streams and seeds", () => {
    const draw = (seed: number, stream: string) => { const r = new Random(seed, stream); return Array.from({ length: 8 }, () => r.next()); };
    expect(draw(7, "search")).toEqual(draw(7, "search"));
    expect(draw(7, "search")).not.toEqual(draw(7, "bootstrap"));
    expect(draw(7, "search")).not.toEqual(draw(8, "search"));
    expect(draw(7, "search").every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it("shuffles into a permutation and samples distinct items", () => {
    const r = new Random(1);
    const items = [...Array(20).keys()];
    expect([...r.shuffle(items)].sort((a, b) => a - b)).toEqual(items);
    const s = r.sample(items, 5);
    expect(new Set(s).size).toBe(5);
    expect(r.sample(items, 50)).toHaveLength(20);
  });
});

describe("CategoricalTPE", () => {
  const params = [{ name: "instruction", size: 6 }, { name: "demos", size: 4 }];

  it("tries every choice of every parameter once during its stratified startup", () => {
    const tpe = new CategoricalTPE(params, new Random(3), { startupTrials: 6 });
    const picks = Array.from({ length: 6 }, () => tpe.suggest([]));
    expect(picks.map((p) => p.instruction).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(picks.slice(0, 4).map((p) => p.demos).sort()).toEqual([0, 1, 2, 3]);
  });

  it("after startup, suggests mostly the choice that scores well", () => {
    const tpe = new CategoricalTPE(params, new Random(9), { startupTrials: 6 });
    const history: Observation[] = [];
    const picks: number[] = [];
    for (let i = 0; i < 26; i++) {
      const p = tpe.suggest(history);
      picks.push(p.instruction!);
      history.push({ params: p, score: p.instruction === 4 ? 1 : 0.2 });
    }
    expect(picks.slice(6).filter((x) => x === 4).length).toBeGreaterThanOrEqual(15);
  });

  it("makes the same suggestions for the same seed and history", () => {
    const run = () => {
      const tpe = new CategoricalTPE(params, new Random(5), { startupTrials: 3 });
      const history: Observation[] = [];
      const out: Record<string, number>[] = [];
      for (let i = 0; i < 12; i++) {
        const p = tpe.suggest(history);
        out.push(p);
        history.push({ params: p, score: (p.instruction! * 7 + p.demos!) % 5 });
      }
      return out;
    };
    expect(run()).toEqual(run());
  });
});
