import { describe, expect, it } from "@jest/globals";
import { accuracy, macroF1, perLabel } from "../../lib/evaluate/metrics.js";

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
});
