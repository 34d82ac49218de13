import { describe, it, expect } from "@jest/globals";
import { Random } from "../../lib/random.js";
import { miproSearcher, searchLoop, type Searcher } from "../../lib/optimize/search.js";
import type { Parameter } from "../../lib/optimize/tpe.js";

/**
 * A task where search efficiency matters: a two-step program, each step with 3 instructions and 6 demo
 * sets (MIPROv2 light with demos), 324 configurations. Every instruction and demo set is partly right:
 * each adds a graded share (0 to 0.15) to the chance of a correct answer, so no single choice finds the
 * best configuration and minibatch scores are noisy. Example e is answered correctly when its difficulty
 * (e + 0.5)/100 is below the configuration's quality, so a minibatch of 25 sees the graded quality
 * through sampling noise, as a real minibatch does.
 */
const params: Parameter[] = [
  { name: "classify.instruction", size: 3 }, { name: "classify.demos", size: 6 },
  { name: "answer.instruction", size: 3 }, { name: "answer.demos", size: 6 },
];
const taskRandom = new Random(12345, "task");
const share: Record<string, number[]> = Object.fromEntries(
  params.map((p) => [p.name, taskRandom.shuffle(Array.from({ length: p.size }, (_, i) => (0.15 * i) / (p.size - 1)))]),
);
// The best configuration by construction: each parameter's largest share.
const bestKey = params.map((p) => share[p.name]!.indexOf(0.15)).join(",");
const quality = (c: Record<string, number>): number => 0.1 + params.reduce((a, p) => a + share[p.name]![c[p.name]!]!, 0);
const validation = Array.from({ length: 100 }, (_, e) => e);
const accuracy = (c: Record<string, number>, examples: number[]): number =>
  examples.filter((e) => (e + 0.5) / 100 < quality(c)).length / examples.length;
const key = (c: Record<string, number>): string => params.map((p) => c[p.name]).join(",");

const TRIAL_CAP = 60;

/**
 * Trials until the best configuration has had its full evaluation (what MIPROv2 returns is the best
 * fully evaluated configuration), or null when it never did within the cap.
 */
async function trialsToBest(makeSearcher: (random: Random) => Searcher, seed: number): Promise<number | null> {
  const random = new Random(seed, "search");
  const zero = Object.fromEntries(params.map((p) => [p.name, 0]));
  let reached: number | null = null;
  await searchLoop({
    searcher: makeSearcher(random),
    trials: TRIAL_CAP,
    fullEvalEvery: 5,
    initial: [{ params: zero, score: accuracy(zero, validation) }],
    minibatch: async (c) => accuracy(c, random.sample(validation, 25)),
    full: async (c, { afterTrial }) => {
      if (reached === null && key(c) === bestKey) reached = afterTrial + 1;
      return accuracy(c, validation);
    },
  });
  return reached;
}

const randomSearch = (random: Random): Searcher => ({
  suggest: () => Object.fromEntries(params.map((p) => [p.name, random.int(p.size)])),
});
const tpe = (random: Random): Searcher => miproSearcher(params, random, TRIAL_CAP);

const seeds = [...Array(10).keys()];
/** The claim: the best configuration reached within the cap in at least 8 of 10 seeds, in at most 45 trials at the median. */
function passes(results: (number | null)[]): boolean {
  const trials = results.map((r) => r ?? Infinity).sort((a, b) => a - b);
  return results.filter((r) => r !== null).length >= 8 && (trials[4]! + trials[5]!) / 2 <= 45;
}

describe("MIPROv2's search: the TPE against seeded random search on a graded task", () => {
  it("the TPE reaches the best configuration in fewer trials than random search over 10 seeds, and random search fails the claim", async () => {
    const fromTPE = await Promise.all(seeds.map((s) => trialsToBest(tpe, s)));
    const fromRandom = await Promise.all(seeds.map((s) => trialsToBest(randomSearch, s)));
    const total = (rs: (number | null)[]) => rs.reduce<number>((a, r) => a + (r ?? TRIAL_CAP + 1), 0);
    console.log(`trials to the best configuration (cap ${TRIAL_CAP}; - = not reached)\nTPE:    ${fromTPE.map((r) => r ?? "-").join(" ")}\nrandom: ${fromRandom.map((r) => r ?? "-").join(" ")}`);
    expect(passes(fromTPE)).toBe(true);
    expect(passes(fromRandom)).toBe(false);
    expect(total(fromTPE)).toBeLessThan(total(fromRandom));
  });
});
