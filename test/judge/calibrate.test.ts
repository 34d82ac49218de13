import { afterEach, describe, expect, it } from "@jest/globals";
import { FewShotExample, Judge, SemanticF1, ValidationError, calibrate, resetConfiguration } from "../../lib/index.js";
import { cohenKappa } from "../../lib/judge/kappa.js";
import { Random } from "../../lib/random.js";
import { ScriptedLM } from "../../lib/testing/index.js";

afterEach(() => resetConfiguration());

const Z = 1.959963984540054; // Φ⁻¹(0.975)

describe("cohenKappa", () => {
  it("matches a hand computation of κ and its Fleiss–Cohen–Everitt interval on a 2×2 table", () => {
    // Rater 1 (rows) × rater 2 (columns): 20 both yes, 5 yes/no, 10 no/yes, 15 both no; n = 50.
    // pₒ = 35/50 = 0.7; rows 0.5/0.5, columns 0.6/0.4; pₑ = 0.5·0.6 + 0.5·0.4 = 0.5; κ = 0.2/0.5 = 0.4.
    // Var: Σᵢ pᵢᵢ[1 − (pᵢ. + p.ᵢ)(1 − κ)]² = 0.4·(1 − 1.1·0.6)² + 0.3·(1 − 0.9·0.6)² = 0.04624 + 0.06348
    //      + (1 − κ)² Σᵢ≠ⱼ pᵢⱼ (p.ᵢ + pⱼ.)² = 0.36·(0.1·1.1² + 0.2·0.9²) = 0.36·0.283 = 0.10188
    //      − [κ − pₑ(1 − κ)]² = (0.4 − 0.3)² = 0.01;  / (n (1 − pₑ)²) = / 12.5  →  0.2016 / 12.5 = 0.016128.
    const k = cohenKappa([[20, 5], [10, 15]]);
    expect(k.observed).toBeCloseTo(0.7, 12);
    expect(k.expected).toBeCloseTo(0.5, 12);
    expect(k.kappa).toBeCloseTo(0.4, 12);
    const se = Math.sqrt(0.016128);
    expect(k.standardError).toBeCloseTo(se, 12);
    expect(k.ci[0]).toBeCloseTo(0.4 - Z * se, 10);
    expect(k.ci[1]).toBeCloseTo(0.4 + Z * se, 10);
    expect(k.ci[0]).toBeCloseTo(0.15109, 4);
    expect(k.ci[1]).toBeCloseTo(0.64891, 4);
  });

  it("gives quadratic-weighted κ as Cohen's (1968) disagreement form 1 − Σvᵢⱼoᵢⱼ / Σvᵢⱼeᵢⱼ with vᵢⱼ = (i − j)²", () => {
    const m = [[10, 2, 0], [3, 8, 2], [0, 1, 4]];
    // Hand: n = 30; rows 12, 13, 5; columns 13, 11, 6.
    // Σ v·o = 1·(2 + 3 + 2 + 1) + 4·(0 + 0) = 8.
    // Σ v·e = Σ (i−j)² rᵢcⱼ / n: (1·(12·11 + 13·13 + 13·6 + 5·11) + 4·(12·6 + 5·13)) / 30 = (1·434 + 4·137) / 30 = 982 / 30.
    const expected = 1 - 8 / (982 / 30);
    expect(cohenKappa(m, "quadratic").kappa).toBeCloseTo(expected, 12);
    expect(cohenKappa(m, "quadratic").kappa).toBeCloseTo(0.75560, 4);
    // Two categories: quadratic weights are the identity, so weighted κ is κ (and so is its interval).
    expect(cohenKappa([[20, 5], [10, 15]], "quadratic")).toEqual(cohenKappa([[20, 5], [10, 15]]));
  });

  it("is 1 with interval [1, 1] at perfect agreement, −1 at perfect balanced disagreement, about 0 for independent raters", () => {
    expect(cohenKappa([[17, 0, 0], [0, 9, 0], [0, 0, 4]])).toMatchObject({ kappa: 1, ci: [1, 1] });
    expect(cohenKappa([[0, 25], [25, 0]]).kappa).toBeCloseTo(-1, 12);
    // 4,000 items, each rater says "pass" with probability 0.6 on its own: nothing beyond chance.
    const random = new Random(7);
    const m = [[0, 0], [0, 0]];
    for (let t = 0; t < 4000; t++) m[random.next() < 0.6 ? 0 : 1]![random.next() < 0.6 ? 0 : 1]!++;
    const k = cohenKappa(m);
    expect(Math.abs(k.kappa)).toBeLessThan(0.05);
    expect(k.ci[0]).toBeLessThan(0);
    expect(k.ci[1]).toBeGreaterThan(0);
  });

  it("covers the population κ about 95% of the time (400 samples of 300 items, population κ = 0.5)", () => {
    // Cells (yes,yes) 0.40, (yes,no) 0.10, (no,yes) 0.15, (no,no) 0.35: pₒ = 0.75, rows 0.5/0.5, columns 0.55/0.45,
    // pₑ = 0.5·0.55 + 0.5·0.45 = 0.5, so κ = (0.75 − 0.5)/(1 − 0.5) = 0.5.
    const cells = [0.4, 0.1, 0.15, 0.35];
    const random = new Random(3);
    let covered = 0;
    for (let rep = 0; rep < 400; rep++) {
      const counts = [0, 0, 0, 0];
      for (let t = 0; t < 300; t++) {
        let u = random.next(), cell = 0;
        while (cell < 3 && u >= cells[cell]!) u -= cells[cell++]!;
        counts[cell]!++;
      }
      const { ci } = cohenKappa([[counts[0]!, counts[1]!], [counts[2]!, counts[3]!]]);
      if (ci[0] <= 0.5 && 0.5 <= ci[1]) covered++;
    }
    expect(covered / 400).toBeGreaterThan(0.92);
    expect(covered / 400).toBeLessThan(0.98);
  });

  it("is NaN when both raters used one and the same category (κ undefined)", () => {
    expect(cohenKappa([[12, 0], [0, 0]]).kappa).toBeNaN();
  });
});

/** Example n judged: the answer is "good n" or "bad n"; the human verdict is given separately. */
function labelled(answerGood: boolean, human: "pass" | "fail", n: number): FewShotExample {
  return new FewShotExample({
    input: { inputs: { question: `question ${n}` }, prediction: { answer: `${answerGood ? "good" : "bad"} ${n}` } },
    output: { verdict: human },
    id: `h-${n}`,
  });
}

describe("calibrate", () => {
  it("runs the judge over human-labelled examples and reports agreement, κ with its interval, and the confusion", async () => {
    // The judge passes "good" answers. Humans: 20 good/pass, 5 good/fail, 10 bad/pass, 15 bad/fail,
    // so against the judge (rows human, columns judge) the table is [[20, 10], [5, 15]]: κ = 0.4 by hand.
    const examples: FewShotExample[] = [];
    const add = (count: number, good: boolean, human: "pass" | "fail") => { for (let i = 0; i < count; i++) examples.push(labelled(good, human, examples.length)); };
    add(20, true, "pass");
    add(5, true, "fail");
    add(10, false, "pass");
    add(15, false, "fail");
    const lm = new ScriptedLM((req) => {
      const answer = (req.inputs?.["answer"] as { answer: string }).answer;
      return { rationale: `saw ${answer}`, verdict: answer.startsWith("good") ? "pass" : "fail" };
    });
    const judge = new Judge({ name: "helpful", criteria: "The answer is good.", lm });
    const cal = await calibrate(judge, examples, { record: false, progress: false });

    expect(cal.n).toBe(50);
    expect(cal.failures).toBe(0);
    expect(cal.accuracy).toBeCloseTo(35 / 50, 12);
    expect(cal.confusion).toEqual({ labels: ["pass", "fail"], matrix: [[20, 10], [5, 15]] });
    expect(cal.kappa).toBeCloseTo(0.4, 12);
    // The transposed table has the same κ and the same hand-computed standard error.
    expect(cal.kappaCi[0]).toBeCloseTo(0.4 - Z * Math.sqrt(0.016128), 10);
    expect(cal.kappaCiMethod).toBe("fleiss-cohen-everitt");
    expect(cal.weightedKappa).toBeUndefined();
    expect(cal.report.results[0]!.prediction).toEqual({ verdict: "pass", rationale: "saw good 0" });
  });

  it("gives quadratic-weighted κ on a numeric scale and leaves out (and counts) examples the judge could not answer", async () => {
    // Human scores 1..5; the judge says the human score, one point lower for n % 3 === 1, and fails on n = 9.
    const examples = Array.from({ length: 10 }, (_, n) => new FewShotExample({
      input: { inputs: { q: `q${n}` }, prediction: { a: `answer ${n}` } }, output: { score: (n % 5) + 1 },
    }));
    const lm = new ScriptedLM((req) => {
      const n = Number(/answer (\d+)/.exec(JSON.stringify(req.inputs))![1]);
      if (n === 9) return "no idea";
      const human = (n % 5) + 1;
      return { rationale: "r", score: n % 3 === 1 && human > 1 ? human - 1 : human };
    });
    const judge = new Judge({ name: "quality", criteria: "Helpful.", scale: { min: 1, max: 5 }, lm });
    const cal = await calibrate(judge, examples, { record: false, progress: false });
    expect(cal.n).toBe(9);
    expect(cal.failures).toBe(1);
    // n = 1 (2→1), 4 (5→4), 7 (3→2) disagree by one point: 6 of 9 agree exactly.
    expect(cal.accuracy).toBeCloseTo(6 / 9, 12);
    expect(cal.confusion.labels).toEqual(["1", "2", "3", "4", "5"]);
    expect(cal.confusion.matrix[1]).toEqual([1, 1, 0, 0, 0]);
    expect(cal.weightedKappa).toBeGreaterThan(cal.kappa);
    expect(cal.weightedKappaCi![0]).toBeLessThanOrEqual(cal.weightedKappa!);
  });

  it("refuses a human label outside the judge's scale, naming the example and what is valid", async () => {
    const judge = new Judge({ name: "helpful", criteria: "Good.", lm: new ScriptedLM([]) });
    const bad = [labelled(true, "pass", 0), new FewShotExample({ input: { inputs: {}, prediction: {} }, output: { verdict: "yes" }, id: "x" })];
    await expect(calibrate(judge, bad, { record: false })).rejects.toThrow(ValidationError);
    await expect(calibrate(judge, bad, { record: false })).rejects.toThrow(/examples\[1\] \(id "x"\) has human verdict "yes"; judge "helpful" gives one of "pass", "fail"/);
    await expect(calibrate(new SemanticF1({ lm: new ScriptedLM([]) }), [labelled(true, "pass", 0)], { record: false })).rejects.toThrow(/is a SemanticF1, which gives recall and precision, not a verdict/);
  });
});
