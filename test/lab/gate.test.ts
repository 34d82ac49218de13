import { describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature } from "../../lib/index.js";
import { gateLines, junitXml, markdownSummary, readBaseline, resultRows, rowsToReport, runGate, type GateBaseline, type ResultRow } from "../../lib/lab/gate/gate.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { resetAfterEach } from "../helpers/scripted.js";

resetAfterEach();

/** n examples; `right` lists which the program got right. */
function rows(n: number, right: (i: number) => boolean): ResultRow[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `test-${i + 1}`, expected: { label: "a" }, prediction: { label: right(i) ? "a" : "b" }, scores: { accuracy: right(i) ? 1 : 0 },
  }));
}

function report(r: ResultRow[]) {
  return rowsToReport(r, { accuracy: r.filter((x) => x.scores.accuracy === 1).length / r.length });
}

function baselineOf(r: ResultRow[], model = "simulated/stand-in"): GateBaseline {
  return { source: "test baseline", models: new Map([[model, report(r)]]) };
}

/** Binomial(n, 1/2) two-sided exact test of k successes, by hand: 2·Σ_{i≤k} C(n,i)/2^n, capped at 1. */
function signTestP(k: number, n: number): number {
  let sum = 0, c = 1;
  for (let i = 0; i <= k; i++) {
    sum += c;
    c = (c * (n - i)) / (i + 1);
  }
  return Math.min(1, (2 * sum) / 2 ** n);
}

describe("the regression gate's verdict", () => {
  it("fails on a significant drop of the primary metric (10 examples fell, none rose)", () => {
    const before = rows(40, (i) => i < 30);
    const after = rows(40, (i) => i < 20);
    const result = runGate(baselineOf(before), [{ model: "simulated/stand-in", report: report(after) }], ["accuracy"]);
    expect(result.failed).toBe(true);
    const c = result.cases[0]!;
    expect(c.comparison.diff).toBeCloseTo(-10 / 40, 12);
    expect(c.comparison.pValue).toBeCloseTo(signTestP(0, 10), 12); // 2 / 1024
    expect(c.failure).toMatch(/accuracy fell significantly: -0\.250/);
  });

  it("a drop that is not significant is not failed: inconclusive while its lower bound is below -T, passed once T covers it", () => {
    // 3 fell (0, 1, 2), 1 rose (20): two-sided p = 2·P(X ≤ 1 | 4) = 0.625, one-sided P(X ≤ 1 | 4) = 5/16.
    // (Contract change: such a drop used to pass at any tolerance; a pass now needs the bound.)
    const before = rows(40, (i) => i < 20);
    const after = rows(40, (i) => (i >= 3 && i < 20) || i === 20);
    const current = [{ model: "simulated/stand-in", report: report(after) }];
    const plain = runGate(baselineOf(before), current, ["accuracy"]);
    expect(plain.cases[0]!.comparison.pValue).toBeCloseTo(signTestP(1, 4), 12);
    expect(plain.cases[0]!.decision!.pValue).toBeCloseTo(5 / 16, 12);
    expect(plain.verdict).toBe("inconclusive");
    expect(plain.failed).toBe(true);
    const low = plain.cases[0]!.decision!.low;
    expect(low).toBeLessThan(-0.05);
    const strict = runGate(baselineOf(before), current, ["accuracy"], { tolerance: 0.02 });
    expect(strict.verdict).toBe("inconclusive");
    expect(strict.cases[0]!.failure).toMatch(/^inconclusive: simulated\/stand-in accuracy: the data cannot rule out a drop larger than 0\.02 .*about [\d,]+ examples \(this run has 40\)/);
    // A tolerance beyond the bound passes; --allow-underpowered lets an inconclusive verdict exit 0 with its warning.
    const loose = runGate(baselineOf(before), current, ["accuracy"], { tolerance: -low + 0.001 });
    expect(loose.verdict).toBe("passed");
    expect(loose.failed).toBe(false);
    const allowed = runGate(baselineOf(before), current, ["accuracy"], { tolerance: 0.02, allowUnderpowered: true });
    expect(allowed).toMatchObject({ verdict: "inconclusive", failed: false });
    expect(allowed.warnings).toEqual([strict.cases[0]!.failure]);
  });

  it("never fails on a rise, nor on a secondary metric's drop", () => {
    const before = rows(30, (i) => i < 10);
    const after = rows(30, (i) => i < 25);
    const rise = runGate(baselineOf(before), [{ model: "simulated/stand-in", report: report(after) }], ["accuracy"]);
    expect(rise.cases[0]!.comparison.significant).toBe(true);
    expect(rise.failed).toBe(false);
    // Secondary metric "other" falls on every example; the primary holds.
    const withOther = (r: ResultRow[], other: number) => r.map((x) => ({ ...x, scores: { ...x.scores, other } }));
    const a = rowsToReport(withOther(before, 1), { accuracy: 10 / 30, other: 1 });
    const b = rowsToReport(withOther(before, 0), { accuracy: 10 / 30, other: 0 });
    // (Tolerance 0.1: 30 unchanged pairs rule out a drop of 0.1 but not of 0.05.)
    const secondary = runGate({ source: "s", models: new Map([["m", a]]) }, [{ model: "m", report: b }], ["accuracy", "other"], { tolerance: 0.1 });
    expect(secondary.cases[1]!.comparison.significant).toBe(true);
    expect(secondary.cases[1]!.failure).toBeNull();
    expect(secondary.failed).toBe(false);
  });

  it("refuses baselines that do not pair: other example ids, a missing model, a bad --max-drop", () => {
    const before = rows(10, () => true);
    const other = before.map((r, i) => ({ ...r, id: i === 4 ? "elsewhere" : r.id }));
    expect(() => runGate(baselineOf(before), [{ model: "simulated/stand-in", report: report(other) }], ["accuracy"])).toThrow(/example "test-5"/);
    expect(() => runGate(baselineOf(before, "openai/gpt-4o"), [{ model: "simulated/stand-in", report: report(before) }], ["accuracy"])).toThrow(/has no model "simulated\/stand-in".*"openai\/gpt-4o"/);
    for (const tolerance of [2, 1, -0.01, Number.NaN]) {
      expect(() => runGate(baselineOf(before), [{ model: "simulated/stand-in", report: report(before) }], ["accuracy"], { tolerance })).toThrow(/--tolerance expects the largest drop to tolerate, a number from 0 up to \(not including\) 1/);
    }
  });
});

describe("three verdicts at small n: a gate that cannot see does not pass", () => {
  it("7 examples, the candidate worse on 5 of 7: failed (one-sided exact p = 1/32, below 0.05)", () => {
    const before = rows(7, () => true);
    const after = rows(7, (i) => i >= 5);
    const result = runGate(baselineOf(before), [{ model: "simulated/stand-in", report: report(after) }], ["accuracy"]);
    const d = result.cases[0]!.decision!;
    expect(d.diff).toBeCloseTo(-5 / 7, 12);
    expect(d.pValue).toBeCloseTo(1 / 32, 12); // P(X ≤ 0 | X ~ Binomial(5, 1/2)), by hand
    expect(result.verdict).toBe("failed");
    expect(result.failed).toBe(true);
    expect(gateLines(result).at(-1)).toBe("gate: failed");
  });

  it("7 examples, none changed: inconclusive (exit 1), and about 52 examples would make it conclusive", () => {
    const same = rows(7, (i) => i < 4);
    const result = runGate(baselineOf(same), [{ model: "simulated/stand-in", report: report(same) }], ["accuracy"]);
    expect(result.verdict).toBe("inconclusive");
    expect(result.failed).toBe(true);
    // No changed pair among n: the score bound is −z²/(n + z²) (z = 1.6449, one-sided 5%), so a drop of 0.05
    // is ruled out from n ≥ z²·0.95/0.05 = 51.4: 52 examples.
    const z = 1.6448536269514722;
    expect(result.cases[0]!.decision!.low).toBeCloseTo(-(z * z) / (7 + z * z), 9);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/about 52 examples \(this run has 7\) would make it conclusive/);
    const lines = gateLines(result);
    expect(lines).toContain(`warning: ${result.warnings[0]}`);
    expect(lines.at(-1)).toBe("gate: inconclusive");
    const allowed = runGate(baselineOf(same), [{ model: "simulated/stand-in", report: report(same) }], ["accuracy"], { allowUnderpowered: true });
    expect(allowed.failed).toBe(false);
    expect(gateLines(allowed)).toContain(`warning: ${result.warnings[0]}`);
    expect(gateLines(allowed).at(-1)).toBe("gate: inconclusive (allowed by --allow-underpowered: exit 0)");
  });

  it("a graded primary metric: failed on a one-sided significant drop; unchanged scores among few examples are inconclusive, not passed on [0, 0]", () => {
    // Scores 0.2–0.9 (graded); the candidate loses 0.3 on every one of 12 examples.
    const graded = (n: number, shift: number): ResultRow[] => Array.from({ length: n }, (_, i) => ({
      id: `g-${i}`, expected: { label: "a" }, prediction: { label: "a" }, scores: { quality: Math.max(0, 0.2 + (0.7 * (i % 8)) / 7 - shift) },
    }));
    const reportOf = (r: ResultRow[]) => rowsToReport(r, { quality: r.reduce((s, x) => s + x.scores.quality!, 0) / r.length });
    const fell = runGate({ source: "s", models: new Map([["m", reportOf(graded(12, 0))]]) }, [{ model: "m", report: reportOf(graded(12, 0.3)) }], ["quality"]);
    expect(fell.cases[0]!.comparison.test).toBe("sign-flip");
    expect(fell.verdict).toBe("failed");
    // Sign-flip with all 12 differences negative: two-sided p = 2/2^12, one-sided 1/2^12 (by hand).
    expect(fell.cases[0]!.decision!.pValue).toBeCloseTo(1 / 4096, 9);
    const same = runGate({ source: "s", models: new Map([["m", reportOf(graded(7, 0))]]) }, [{ model: "m", report: reportOf(graded(7, 0)) }], ["quality"]);
    expect(same.verdict).toBe("inconclusive");
    expect(same.cases[0]!.decision!.low).toBeLessThan(-0.05);
    expect(same.warnings[0]).toMatch(/about 52 examples \(this run has 7\)/);
  });

  it("the terminal, JUnit and the step summary show the verdict word, never a bare \"ok\"", () => {
    const same = rows(7, (i) => i < 4);
    const withOther = (r: ResultRow[]) => r.map((x) => ({ ...x, scores: { ...x.scores, other: 0.5 } }));
    const base = rowsToReport(withOther(same), { accuracy: 4 / 7, other: 0.5 });
    const result = runGate({ source: "s", models: new Map([["m", base]]) }, [{ model: "m", report: base }], ["accuracy", "other"]);
    const md = markdownSummary(result, "tickets");
    expect(md).toMatch(/^### typelm gate: tickets inconclusive$/m);
    expect(md).toMatch(/^\| m \| accuracy \(primary\) \|.*\| inconclusive \|$/m);
    expect(md).toMatch(/^\| m \| other \|.*\| not gated, no significant change \|$/m);
    expect(md).not.toMatch(/\bok\b/);
    const xmlText = junitXml(result, "tickets");
    expect(xmlText).toContain('<failure message="inconclusive: m accuracy: the data cannot rule out a drop larger than 0.05');
    expect(xmlText).toMatch(/<system-out>[^<]*: inconclusive<\/system-out>/);
    expect(xmlText).not.toMatch(/\bok\b/);
    expect(gateLines(result).join("\n")).not.toMatch(/\bok\b/);
  });

  it("escapes metric and model names in the step summary: pipes, backticks and HTML cannot break the table", () => {
    const metric = "a|b`c<img src=x onerror=alert(1)>*_[x](y)";
    const r = rows(60, () => true).map((x) => ({ ...x, scores: { [metric]: x.scores.accuracy! } }));
    const rep = rowsToReport(r, { [metric]: 1 });
    const md = markdownSummary(runGate({ source: "s", models: new Map([["m|`<b>", rep]]) }, [{ model: "m|`<b>", report: rep }], [metric]), "t|`<i>");
    const row = md.split("\n").find((l) => l.includes("(primary)"))!;
    // Eight cells: nine pipes that are not escaped.
    expect(row.match(/(?<!\\)\|/g)).toHaveLength(9);
    expect(md).not.toMatch(/<img|<b>|<i>/);
    expect(md).not.toMatch(/(?<!\\)`/);
    expect(row).toContain("a\\|b\\`c&lt;img src=x onerror=alert(1)&gt;\\*\\_\\[x\\](y)");
  });
});

describe("--baseline sources", () => {
  it("reads each model's optimized evaluation (else its baseline) from results.json, and says when rows are missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-gate-"));
    const evalOf = (r: ResultRow[]) => ({ metrics: { accuracy: r.filter((x) => x.scores.accuracy === 1).length / r.length }, rows: r });
    writeFileSync(join(dir, "results.json"), JSON.stringify({
      models: {
        "m/one": { baseline: evalOf(rows(5, () => false)), optimized: evalOf(rows(5, () => true)) },
        "m/two": { baseline: evalOf(rows(5, (i) => i < 2)), optimized: null },
      },
    }));
    const b = readBaseline("results.json", dir, () => { throw new Error("not a run id"); });
    expect(b.models.get("m/one")!.metrics.accuracy).toBe(1);
    expect(b.models.get("m/two")!.metrics.accuracy).toBeCloseTo(0.4, 12);
    writeFileSync(join(dir, "old.json"), JSON.stringify({ models: { "m/one": { baseline: { metrics: { accuracy: 1 } }, optimized: null } } }));
    expect(() => readBaseline("old.json", dir, () => { throw new Error("x"); })).toThrow(/no per-example rows for model "m\/one"/);
    expect(() => readBaseline("missing.json", dir, () => { throw new Error("x"); })).toThrow(/no file at/);
  });

  it("checks each metric against its rows: f1_score as macro-F1 even over labels with spaces; a changed value is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-gate-f1-"));
    const gold = ["very good", "very good", "bad", "bad"], said = ["very good", "bad", "bad", "bad"];
    const r: ResultRow[] = gold.map((g, i) => ({ id: `r-${i}`, expected: { label: g }, prediction: { label: said[i] }, scores: { accuracy: g === said[i] ? 1 : 0, f1_score: g === said[i] ? 1 : 0 } }));
    // Macro-F1 by hand: "very good" P 1, R 1/2, F1 2/3; "bad" P 2/3, R 1, F1 4/5; mean 11/15.
    const write = (f1: number) => {
      writeFileSync(join(dir, "results.json"), JSON.stringify({ models: { m: { baseline: { metrics: { accuracy: 0.75, f1_score: f1 }, rows: r }, optimized: null } } }));
      return () => readBaseline("results.json", dir, () => { throw new Error("not a run id"); });
    };
    expect(write(11 / 15)().models.get("m")!.metrics.f1_score).toBeCloseTo(11 / 15, 12);
    expect(write(0.9)).toThrow(/metric "f1_score" says 0\.9 but its rows give 0\.75; the summary was changed/);
  });

  it("takes a run id when no such file exists, for every model", () => {
    const r = resultRows(report(rows(4, (i) => i < 2)).results);
    const b = readBaseline("abcd1234", tmpdir(), (id) => ({ id: `${id}-full`, rows: [...report(r).results], metrics: { accuracy: 0.5 }, status: "completed", config: {} }));
    expect(b.source).toBe("run abcd1234-full");
    expect(b.models.get("*")!.results).toHaveLength(4);
  });
});

describe("JUnit XML, read back by a real XML parser", () => {
  it("one testcase per model × metric; a failure with the numbers on a regression; names escaped", () => {
    const before = rows(40, (i) => i < 30);
    const after = rows(40, (i) => i < 20);
    const weird = `m<&>"'\u0001`;
    const result = runGate(
      { source: "s", models: new Map([["m/ok", report(before)], [weird, report(before)]]) },
      [{ model: "m/ok", report: report(before) }, { model: weird, report: report(after) }],
      ["accuracy"],
      { tolerance: 0.1 },
    );
    const dir = mkdtempSync(join(tmpdir(), "typelm-junit-"));
    writeFileSync(join(dir, "typelm.xml"), junitXml(result, "tickets"));
    // Python's ElementTree (a conforming XML parser) reads the file back.
    const parsed = JSON.parse(execFileSync("python3", ["-c", `
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = [{"classname": c.get("classname"), "name": c.get("name"), "failure": (c.find("failure").get("message") if c.find("failure") is not None else None), "text": (c.find("failure").text if c.find("failure") is not None else None)} for c in root.iter("testcase")]
suite = root.find("testsuite")
print(json.dumps({"tests": suite.get("tests"), "failures": suite.get("failures"), "cases": cases}))
`, join(dir, "typelm.xml")], { encoding: "utf8" })) as { tests: string; failures: string; cases: { classname: string; name: string; failure: string | null; text: string | null }[] };
    expect(parsed.tests).toBe("2");
    expect(parsed.failures).toBe("1");
    expect(parsed.cases[0]).toMatchObject({ classname: "tickets.m/ok", name: "accuracy (primary)", failure: null });
    expect(parsed.cases[1]!.classname).toBe(`tickets.m<&>"'`);
    expect(parsed.cases[1]!.failure).toMatch(/accuracy fell significantly: -0\.250/);
    expect(parsed.cases[1]!.text).toMatch(/baseline 0\.750, this run 0\.500, difference -0\.250 .* n = 40/);
  });

  it("a Markdown step summary with one row per case", () => {
    const result = runGate(baselineOf(rows(20, () => true)), [{ model: "simulated/stand-in", report: report(rows(20, () => true)) }], ["accuracy"], { tolerance: 0.15 });
    const md = markdownSummary(result, "tickets");
    expect(md).toMatch(/typelm gate: tickets passed/);
    expect(md.split("\n").filter((l) => l.startsWith("| simulated/stand-in | accuracy (primary) | 1.000 | 1.000 |"))).toHaveLength(1);
  });
});

class Guess extends Signature {
  static override input = { question: z.string() };
  static override output = { answer: z.enum(["yes", "no"]) };
}

/** A deterministic hash of a string to [0, 1) (FNV-1a then a xorshift mix): the "sampling" of the noisy model. */
function unit(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 15; h = Math.imul(h, 0x2c1b3c6d); h ^= h >>> 12; h = Math.imul(h, 0x297a2d39); h ^= h >>> 15;
  return (h >>> 0) / 2 ** 32;
}

describe("A/A: the same program evaluated twice by a noisy model does not fail the gate", () => {
  it("false-alarm rate over 200 A/A pairs stays at or below the nominal 5% (Wilson interval shown)", async () => {
    const n = 40;
    // Each question has its own chance of a right answer (0.15..0.95): a model sampled at temperature > 0.
    const chance = Array.from({ length: n }, (_, i) => 0.15 + (0.8 * i) / (n - 1));
    const testExamples = chance.map((_, i) => new FewShotExample({ id: `q-${i}`, input: { question: `q#${i}` }, output: { answer: "yes" } }));
    const evaluate = async (pair: number, run: number) => {
      const lm = new ScriptedLM((req) => {
        const i = Number((req.inputs?.question as string).split("#")[1]);
        return { answer: unit(`${pair}/${run}/${i}`) < chance[i]! ? "yes" : "no" };
      });
      const program = new Predict(Guess).configure((c) => { c.lm = lm; });
      const r = await new Evaluation({ record: false, progress: false, concurrency: 8 }).evaluate({ moduleInstance: program, testExamples, metrics: ["accuracy"] });
      return { results: r.results, metrics: r.metrics };
    };
    const pairs = 200;
    let alarms = 0, drops = 0;
    for (let p = 0; p < pairs; p++) {
      const a = await evaluate(p, 0);
      const b = await evaluate(p, 1);
      const result = runGate({ source: "A", models: new Map([["m", a]]) }, [{ model: "m", report: b }], ["accuracy"]);
      if (result.verdict === "failed") alarms++;
      if (result.cases[0]!.comparison.diff < 0) drops++;
    }
    // The runs really differ (a model that always gave the same answers would prove nothing).
    expect(drops).toBeGreaterThan(pairs / 4);
    const rate = alarms / pairs;
    const z = 1.959964, center = (rate + (z * z) / (2 * pairs)) / (1 + (z * z) / pairs);
    const half = (z / (1 + (z * z) / pairs)) * Math.sqrt((rate * (1 - rate)) / pairs + (z * z) / (4 * pairs * pairs));
    process.stdout.write(`A/A false alarms: ${alarms} of ${pairs} (${(100 * rate).toFixed(1)}%, 95% Wilson ${(100 * (center - half)).toFixed(1)}-${(100 * (center + half)).toFixed(1)}%)\n`);
    expect(rate).toBeLessThanOrEqual(0.05);
  }, 120_000);
});
