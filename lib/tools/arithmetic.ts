/**
 * A recursive-descent parser and evaluator for arithmetic, so the calculator never hands model text
 * to `eval` or `Function`.
 *
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%" | "×" | "÷") unary)*
 *   unary      := ("-" | "+") unary | power
 *   power      := primary (("^" | "**") unary)?        right-associative: 2^3^2 = 2^9
 *   primary    := number | "(" expression ")"
 *   number     := digits ["." digits] [("e" | "E") ["+" | "-"] digits]   (or ".5")
 *
 * Unary minus binds looser than a power, as in mathematics: -2^2 = -4, while 2^-1 = 0.5.
 * Also the calculator tool's argument schema (`calculatorInput`), built with the first calculator.
 */
import { z } from "zod";
import { ValidationError } from "../errors.js";

const MAX_LENGTH = 10_000;
/** Nesting bound, so "((((…" cannot overflow the host's stack. */
const MAX_DEPTH = 200;

export class ArithmeticError extends ValidationError {}

class Parser {
  private position = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  parse(): number {
    this.skipSpace();
    if (this.atEnd()) throw this.fail("expected a number or \"(\", received an empty expression");
    const value = this.expression();
    this.skipSpace();
    if (!this.atEnd()) throw this.fail(`unexpected ${this.describeHere()}, expected an operator or the end`);
    return value;
  }

  private expression(): number {
    let value = this.term();
    for (;;) {
      const op = this.accept("+", "-", "−");
      if (!op) return value;
      const right = this.term();
      value = op === "+" ? value + right : value - right;
    }
  }

  private term(): number {
    let value = this.unary();
    for (;;) {
      const start = this.position;
      const op = this.accept("*", "×", "/", "÷", "%");
      if (!op) return value;
      const right = this.unary();
      if (op === "*" || op === "×") value *= right;
      else if (right === 0) throw this.fail(op === "%" ? "modulo by zero" : "division by zero", start);
      else value = op === "%" ? value % right : value / right;
    }
  }

  private unary(): number {
    const op = this.accept("-", "−", "+");
    if (!op) return this.power();
    const operand = this.nested(() => this.unary());
    return op === "+" ? operand : -operand;
  }

  private power(): number {
    const base = this.primary();
    if (!this.accept("**", "^")) return base;
    return base ** this.nested(() => this.unary());
  }

  private primary(): number {
    this.skipSpace();
    if (this.accept("(")) {
      const open = this.position - 1;
      const value = this.nested(() => this.expression());
      if (!this.accept(")")) throw this.fail(`missing ")" for the "(" at position ${open + 1}`);
      return value;
    }
    const match = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.position));
    if (!match) throw this.fail(`expected a number or "(", received ${this.describeHere()}`);
    this.position += match[0].length;
    return Number(match[0]);
  }

  private nested(parse: () => number): number {
    if (++this.depth > MAX_DEPTH) throw this.fail(`expression nested deeper than ${MAX_DEPTH} levels`);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  /** Consumes the first of `tokens` found at the current position (after spaces). Longer tokens go first. */
  private accept(...tokens: string[]): string | null {
    this.skipSpace();
    for (const token of tokens) {
      if (this.text.startsWith(token, this.position)) {
        // "*" must not swallow the first half of "**".
        if (token === "*" && this.text.startsWith("**", this.position)) continue;
        this.position += token.length;
        return token;
      }
    }
    return null;
  }

  private skipSpace(): void {
    while (this.position < this.text.length && /\s/.test(this.text[this.position]!)) this.position++;
  }

  private atEnd(): boolean {
    return this.position >= this.text.length;
  }

  private describeHere(): string {
    return this.atEnd() ? "the end of the expression" : `"${this.text[this.position]}" at position ${this.position + 1}`;
  }

  private fail(problem: string, at = this.position): ArithmeticError {
    return new ArithmeticError(`Cannot evaluate ${JSON.stringify(this.text)}: ${problem}`, { field: `expression[${at}]` });
  }
}

/** Evaluates an arithmetic expression; throws `ArithmeticError` (a ValidationError) on malformed input. */
export function evaluateArithmetic(expression: string): number {
  if (expression.length > MAX_LENGTH) {
    throw new ArithmeticError(`Cannot evaluate expression: longer than ${MAX_LENGTH} characters`, { field: "expression" });
  }
  const value = new Parser(expression).parse();
  if (!Number.isFinite(value)) {
    throw new ArithmeticError(`Cannot evaluate ${JSON.stringify(expression)}: the result is not a finite number (${value})`, {
      field: "expression",
    });
  }
  // Rounds away binary noise (0.1 + 0.2 → 0.3) while keeping 15 significant digits.
  return Number(value.toPrecision(15));
}

/** The calculator tool's input shape (lib/tools/calculator.ts), built at the first call and shared by every calculator. */
export function calculatorInput(): { expression: z.ZodString } {
  return (inputShape ??= {
    expression: z
      .string()
      .describe("Arithmetic using numbers, + - * / (or × ÷), % , ^ or ** for powers, and parentheses, e.g. \"2 * (3 + 4)\""),
  });
}

let inputShape: { expression: z.ZodString } | undefined;
