import { z } from "zod";
import { evaluateArithmetic } from "./arithmetic.js";
import { Tool } from "./tool.js";

const input = {
  expression: z
    .string()
    .describe("Arithmetic using numbers, + - * / (or × ÷), % , ^ or ** for powers, and parentheses, e.g. \"2 * (3 + 4)\""),
};

/** Safe arithmetic for agents: a real parser, never `eval`. `call({ expression: "2 * (3 + 4)" })` → 14. */
export class CalculatorTool extends Tool<typeof input> {
  readonly name = "calculator";
  readonly description = "Evaluate an arithmetic expression and return the number.";
  readonly input = input;

  call({ expression }: { expression: string }): number {
    return evaluateArithmetic(expression);
  }
}
