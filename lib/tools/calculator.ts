import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import { evaluateArithmetic } from "./arithmetic.js";
import { Tool } from "./tool.js";

/** The tool's argument schema, built when the first calculator is made (zod schemas cost start-up time). */
const calculatorInput = onFirstUse(() => ({
  expression: z
    .string()
    .describe("Arithmetic using numbers, + - * / (or × ÷), % , ^ or ** for powers, and parentheses, e.g. \"2 * (3 + 4)\""),
}));

/** Safe arithmetic for agents: a real parser, never `eval`. `call({ expression: "2 * (3 + 4)" })` → 14. */
export class CalculatorTool extends Tool<ReturnType<typeof calculatorInput>> {
  readonly name = "calculator";
  readonly description = "Evaluate an arithmetic expression and return the number.";
  readonly input = calculatorInput();

  call({ expression }: { expression: string }): number {
    return evaluateArithmetic(expression);
  }
}
