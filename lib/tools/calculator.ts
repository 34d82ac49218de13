/**
 * The calculator tool: safe arithmetic for agents. Its parser and its argument schema are in
 * arithmetic.ts, which the bundle loads when the first calculator is made.
 */
import { calculatorInput, evaluateArithmetic } from "./arithmetic.js";
import { Tool } from "./tool.js";

/** Safe arithmetic for agents: a real parser, never `eval`. `call({ expression: "2 * (3 + 4)" })` → 14. */
export class CalculatorTool extends Tool<ReturnType<typeof calculatorInput>> {
  readonly name = "calculator";
  readonly description = "Evaluate an arithmetic expression and return the number.";
  readonly input = calculatorInput();

  call({ expression }: { expression: string }): number {
    return evaluateArithmetic(expression);
  }
}
