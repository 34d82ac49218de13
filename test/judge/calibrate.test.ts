import { afterEach, describe, expect, it } from "@jest/globals";
import { FewShotExample, Judge, SemanticF1, ValidationError, calibrate, resetConfiguration } from "../../lib/index.js";
import { cohenKappa } from "../../lib/judge/kappa.js";
import { Random } from "../../lib/random.js";
import { ScriptedLM } from "../../lib/testing/index.js";

afterEach(() => resetConfiguration());

const Z = 1.959963984540054; // Φ⁻¹(0.975)

/**
 * κ and its Fleiss–Cohen–Everitt variance of a 2×2 table in the unweighted form (the test's own code):
 * [Σᵢ pᵢᵢ(1 − (pᵢ. + p.ᵢ)(1 − κ))² + (1 − κ)² Σᵢ≠ⱼ pᵢⱼ(p.ᵢ + pⱼ.)² − (κ − pₑ(1 − κ))²] / (n(1 − pₑ)²).
 */
function ownKappa(m: readonly (readonly number[])[]): { kappa: number; se: number } {
  const n = m[0]![0]! + m[0]![1]! + m[1]![0]! + m[1]![1]!;
  const p = m.map((row) => row.map((c) => c / n));
  const r = [p[0]![0]! + p[0]![1]!, p[1]![0]! + p[1]![1]!], c = [p[0]![0]! + p[1]![0]!, p[0]![1]! + p[1]![1]!];
  const po = p[0]![0]! + p[1]![1]!, pe = r[0]! * c[0]! + r[1]! * c[1]!;
  const kappa = (po - pe) / (1 - pe);
  let v = 0;
  for (let i = 0; i < 2; i++) v += p[i]![i]! * (1 - (r[i]! + c[i]!) * (1 - kappa)) ** 2;
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) if (i !== j) v += (1 - kappa) ** 2 * p[i]![j]! * (c[i]! + r[j]!) ** 2;
  v -= (kappa - pe * (1 - kappa)) ** 2;
  return { kappa, se: Math.sqrt(v / (n * (1 - pe) ** 2)) };
}

/** The reported interval by the test's own code: κ̃ ± z·SẼ on the table with ½ added to each cell, clipped, holding κ. */
function ownInterval(m: readonly (readonly number[])[]): [number, number] {
  const { kappa } = ownKappa(m);
  const s = ownKappa(m.map((row) => row.map((c) => c + 0.5)));
  return [Math.max(-1, Math.min(kappa, s.kappa - Z * s.se)), Math.min(1, Math.max(kappa, s.kappa + Z * s.se))];
}

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
    expect(ownKappa([[20, 5], [10, 15]]).se).toBeCloseTo(se, 12);
    // The interval: the same formula on the table with ½ added to each cell (n = 52).
    const [low, high] = ownInterval([[20, 5], [10, 15]]);
    expect(k.ci[0]).toBeCloseTo(low, 12);
    expect(k.ci[1]).toBeCloseTo(high, 12);
    expect(low).toBeLessThan(0.4);
    expect(high).toBeGreaterThan(0.4);
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

  it("is 1 at perfect agreement and −1 at perfect balanced disagreement, each with an interval that is not a point; about 0 for independent raters", () => {
    const perfect = cohenKappa([[17, 0, 0], [0, 9, 0], [0, 0, 4]]);
    expect(perfect.kappa).toBe(1);
    expect(perfect.ci[1]).toBe(1);
    expect(perfect.ci[0]).toBeLessThan(0.95);
    const opposed = cohenKappa([[0, 25], [25, 0]]);
    expect(opposed.kappa).toBeCloseTo(-1, 12);
    expect(opposed.ci[0]).toBe(-1);
    expect(opposed.ci[1]).toBeGreaterThan(-0.95);
    expect(opposed.ci).toEqual(ownInterval([[0, 25], [25, 0]]).map((v) => expect.closeTo(v, 12)));
    // No table of 30 items with κ defined gets a single point.
    for (let a = 0; a <= 30; a++) for (let b = 0; a + b <= 30; b++) for (let c = 0; a + b + c <= 30; c++) {
      const { kappa, ci } = cohenKappa([[a, b], [c, 30 - a - b - c]]);
      if (!Number.isNaN(kappa)) expect(ci[1] - ci[0]).toBeGreaterThan(0.05);
    }
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

  it("n = 30 on skewed populations: exact coverage over every 2×2 table ≥ 0.90 where κ ± z·SE covered 0.67–0.86", () => {
    // Cells (yes,yes), (yes,no), (no,yes), (no,no). A table with κ undefined counts as a miss.
    const lf = [0];
    for (let i = 1; i <= 30; i++) lf.push(lf[i - 1]! + Math.log(i));
    for (const cells of [[0.08, 0.04, 0.04, 0.84], [0.05, 0.05, 0.02, 0.88], [0.15, 0.03, 0.05, 0.77], [0.45, 0.02, 0.03, 0.5]]) {
      const truth = ownKappa([[cells[0]!, cells[1]!], [cells[2]!, cells[3]!]]).kappa;
      let covered = 0;
      for (let a = 0; a <= 30; a++) for (let b = 0; a + b <= 30; b++) for (let c = 0; a + b + c <= 30; c++) {
        const d = 30 - a - b - c;
        const { ci } = cohenKappa([[a, b], [c, d]]);
        if (ci[0] <= truth && truth <= ci[1]) {
          covered += Math.exp(lf[30]! - lf[a]! - lf[b]! - lf[c]! - lf[d]! + a * Math.log(cells[0]!) + b * Math.log(cells[1]!) + c * Math.log(cells[2]!) + d * Math.log(cells[3]!));
        }
      }
      expect({ cells, covered: Number(covered.toFixed(3)), enough: covered >= 0.9 }).toMatchObject({ cells, enough: true });
    }
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
    expect(cal.kappaCi[0]).toBeCloseTo(ownInterval([[20, 10], [5, 15]])[0], 10);
    expect(cal.kappaCiMethod).toBe("fleiss-cohen-everitt-pseudocounts");
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
