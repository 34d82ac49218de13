import { describe, expect, it } from "@jest/globals";
import { ValidationError } from "../../lib/errors.js";
import { evaluateArithmetic } from "../../lib/tools/arithmetic.js";
import { CalculatorTool } from "../../lib/tools/calculator.js";

describe("evaluateArithmetic", () => {
  it.each([
    ["2 * (3 + 4)", 14],
    ["1 + 2 * 3", 7],
    ["10 - 4 - 3", 3],
    ["24 / 4 / 2", 3],
    ["2 ^ 3 ^ 2", 512],
    ["2 ** 10", 1024],
    ["-2 ^ 2", -4],
    ["(-2) ^ 2", 4],
    ["2 ^ -1", 0.5],
    ["-(3 + 4)", -7],
    ["--5", 5],
    ["+3 - -2", 5],
    ["3 × 4 ÷ 6", 2],
    ["7 % 4", 3],
    ["1.5 + .25", 1.75],
    ["0.1 + 0.2", 0.3],
    ["1e3 + 2.5E-1", 1000.25],
    ["  ( ( 1 ) )  ", 1],
    ["5 − 2", 3],
  ])("%s = %d", (expression, expected) => {
    expect(evaluateArithmetic(expression)).toBe(expected);
  });

  it.each([
    ["1 / 0", /division by zero/],
    ["5 % (2 - 2)", /modulo by zero/],
    ["", /empty expression/],
    ["2 +", /expected a number or "\(", received the end of the expression/],
    ["(1 + 2", /missing "\)" for the "\(" at position 1/],
    ["1 + 2)", /unexpected "\)" at position 6/],
    ["2 x 3", /unexpected "x" at position 3/],
    ["process.exit()", /expected a number or "\(", received "p" at position 1/],
    ["10 ^ 400", /not a finite number/],
    ["(".repeat(500) + "1" + ")".repeat(500), /nested deeper than 200 levels/],
  ])("rejects %j with a clear error", (expression, message) => {
    expect(() => evaluateArithmetic(expression)).toThrow(ValidationError);
    expect(() => evaluateArithmetic(expression)).toThrow(message);
  });
});

describe("CalculatorTool", () => {
  it("is a tool named calculator taking one expression string", async () => {
    const calculator = new CalculatorTool();
    expect(calculator.name).toBe("calculator");
    expect(calculator.jsonSchema()).toMatchObject({
      type: "object",
      properties: { expression: { type: "string" } },
      required: ["expression"],
    });
    expect(calculator.call({ expression: "2 * (3 + 4)" })).toBe(14);
    expect(await calculator.invoke({ expression: "2 ^ 10" })).toEqual({ ok: true, value: 1024 });
  });

  it("reports malformed input and division by zero as error outcomes", async () => {
    const calculator = new CalculatorTool();
    const outcome = await calculator.invoke({ expression: "1 / 0" });
    expect(outcome).toEqual({ ok: false, error: expect.stringContaining("division by zero") });
    expect(await calculator.invoke({ expression: 42 })).toEqual({
      ok: false,
      error: 'Invalid arguments for tool "calculator": expression: Invalid input: expected string, received number',
    });
  });
});
