import { ValidationError } from "../errors.js";
import { frozenCopy, isPlainObject } from "../plain-object.js";

/**
 * One worked example: input values and the output values expected for them, with an optional stable id.
 * The example keeps frozen copies of the values it was given, so it cannot change after it is made:
 * a prompt built from it stays true to it, and changing a demo means replacing the example.
 */
export class FewShotExample<I extends Record<string, unknown> = Record<string, unknown>, O extends Record<string, unknown> = Record<string, unknown>> {
  readonly input: I;
  readonly output: O;
  /** A stable identifier (a dataset row id such as "train-17"); optimizers record demos by it. */
  readonly id: string | undefined;

  constructor({ input, output, id }: { input: I; output: O; id?: string | undefined }) {
    if (!isPlainObject(input)) {
      throw new ValidationError("FewShotExample input must be an object keyed by input field names", { field: "input" });
    }
    if (!isPlainObject(output)) {
      throw new ValidationError("FewShotExample output must be an object keyed by output field names", { field: "output" });
    }
    if (id !== undefined && typeof id !== "string") {
      throw new ValidationError(`FewShotExample id must be a string; received ${typeof id}`, { field: "id" });
    }
    this.input = frozenCopy(input);
    this.output = frozenCopy(output);
    this.id = id;
    Object.freeze(this);
  }

  /** The example as plain JSON: `{ input, output }`, with `id` when it has one. */
  toJSON(): { input: I; output: O; id?: string } {
    return this.id === undefined ? { input: this.input, output: this.output } : { id: this.id, input: this.input, output: this.output };
  }

  /** Rebuilds an example from its JSON form (as stored by `dumpState`). */
  static fromJSON(data: unknown): FewShotExample {
    const d = data as { input?: Record<string, unknown>; output?: Record<string, unknown>; id?: string };
    return new FewShotExample({ input: d?.input as Record<string, unknown>, output: d?.output as Record<string, unknown>, id: d?.id });
  }
}
