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

  it.each([
    // Random choice would pick it about 20/6 ≈ 3 times of 20; the joint model keeps a uniform prior kernel, so it explores a little more.
    ["multivariate (the default)", {}, 12],
    ["univariate", { multivariate: false }, 15],
  ] as const)("after startup, suggests mostly the choice that scores well: %s", (_name, options, atLeast) => {
    const tpe = new CategoricalTPE(params, new Random(9), { startupTrials: 6, ...options });
    const history: Observation[] = [];
    const picks: number[] = [];
    for (let i = 0; i < 26; i++) {
      const p = tpe.suggest(history);
      picks.push(p.instruction!);
      history.push({ params: p, score: p.instruction === 4 ? 1 : 0.2 });
    }
    expect(picks.slice(6).filter((x) => x === 4).length).toBeGreaterThanOrEqual(atLeast);
  });

  it("multivariate: keeps the choices that scored well together", () => {
    // Only two combinations score: (1, 2) and (3, 0). A per-parameter model mixes them into (1, 0) or (3, 2).
    const tpe = new CategoricalTPE(params, new Random(4), { startupTrials: 6 });
    const history: Observation[] = [];
    const good = (p: Record<string, number>) => (p.instruction === 1 && p.demos === 2) || (p.instruction === 3 && p.demos === 0);
    for (const [instruction, demos] of [[1, 2], [3, 0], [0, 1], [2, 3], [4, 1], [5, 3], [0, 0], [2, 2], [4, 3], [5, 1]] as const) {
      history.push({ params: { instruction, demos }, score: good({ instruction, demos }) ? 1 : 0 });
    }
    for (let i = 0; i < 6; i++) tpe.suggest([]);
    const picks = Array.from({ length: 20 }, () => tpe.suggest(history));
    const mixed = picks.filter((p) => (p.instruction === 1 && p.demos === 0) || (p.instruction === 3 && p.demos === 2)).length;
    expect(picks.filter(good).length).toBeGreaterThanOrEqual(10);
    expect(mixed).toBeLessThanOrEqual(2);
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
