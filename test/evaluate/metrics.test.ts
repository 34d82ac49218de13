import { describe, expect, it } from "@jest/globals";
import { accuracy, exactMatch, macroF1, normalizeAnswer, perLabel, tokenF1 } from "../../lib/evaluate/metrics.js";

describe("metrics", () => {
  it("accuracy is the share of exact matches", () => {
    expect(accuracy(["a", "b", "a", "c"], ["a", "b", "b", "c"])).toBe(0.75);
  });

  it("macro-F1 averages per-label F1 over gold and predicted labels", () => {
    const gold = ["a", "a", "b", "b"];
    const pred = ["a", "b", "b", "b"];
    // a: p=1 r=0.5 f1=2/3; b: p=2/3 r=1 f1=0.8
    expect(macroF1(gold, pred)).toBeCloseTo((2 / 3 + 0.8) / 2, 10);
    expect(perLabel(gold, pred, "b")).toEqual({ precision: 2 / 3, recall: 1, f1: 0.8, support: 2 });
  });

  it("a label predicted but never gold counts with F1 0", () => {
    expect(macroF1(["a", "a"], ["a", "z"])).toBeCloseTo((2 / 3 + 0) / 2, 10);
  });

  it("refuses lists of different lengths", () => {
    expect(() => accuracy(["a"], [])).toThrow(RangeError);
  });

  it("a missing prediction (null) misses its gold label and adds no label", () => {
    // a: tp 1 → F1 1; b: tp 0, fn 1 → F1 0. No third label for the null.
    expect(macroF1(["a", "b"], ["a", null])).toBe(0.5);
    expect(accuracy(["a", "b"], ["a", null])).toBe(0.5);
  });
});

describe("SQuAD normalisation", () => {
  it("lower-cases, deletes punctuation and articles, collapses spaces", () => {
    expect(normalizeAnswer("  The Cat's   hat, an  apple!")).toBe("cats hat apple");
  });

  it("exact match compares normalised answers", () => {
    expect(exactMatch("the Eiffel Tower.", "Eiffel tower")).toBe(1);
    expect(exactMatch("Eiffel", "Eiffel tower")).toBe(0);
  });

  it("token F1 counts shared tokens with multiplicity", () => {
    // predicted: paris paris france (3), gold: paris (1): one shared → P 1/3, R 1, F1 0.5.
    expect(tokenF1("Paris, Paris, France", "Paris")).toBeCloseTo(0.5, 12);
    expect(tokenF1("cat", "")).toBe(0);
    expect(tokenF1("the", "a")).toBe(1);
  });
});
