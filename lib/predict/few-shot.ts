import { ValidationError } from "../errors.js";

/** One worked example: input values and the output values expected for them. */
export class FewShotExample<I extends Record<string, unknown> = Record<string, unknown>, O extends Record<string, unknown> = Record<string, unknown>> {
  readonly input: I;
  readonly output: O;

  constructor({ input, output }: { input: I; output: O }) {
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      throw new ValidationError("FewShotExample input must be an object keyed by input field names", { field: "input" });
    }
    if (output === null || typeof output !== "object" || Array.isArray(output)) {
      throw new ValidationError("FewShotExample output must be an object keyed by output field names", { field: "output" });
    }
    this.input = input;
    this.output = output;
  }

  toJSON(): { input: I; output: O } {
    return { input: this.input, output: this.output };
  }

  /** Rebuilds an example from its JSON form (as stored by `dumpState`). */
  static fromJSON(data: unknown): FewShotExample {
    const d = data as { input?: Record<string, unknown>; output?: Record<string, unknown> };
    return new FewShotExample({ input: d?.input as Record<string, unknown>, output: d?.output as Record<string, unknown> });
  }
}
