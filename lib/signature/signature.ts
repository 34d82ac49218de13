import type { z } from "zod";
import { ValidationError } from "../errors.js";
import { compiled } from "./compile.js";

/** A signature's field declarations: zod schemas keyed by field name. */
export type Shape = Record<string, z.ZodType>;

/** What every signature class looks like from the outside. */
export interface SignatureClass<I extends Shape = Shape, O extends Shape = Shape> {
  readonly name: string;
  description?: string;
  input?: I;
  output: O;
  /** The JSON Schema of the input fields (a fresh copy each time). */
  inputJsonSchema(): Record<string, unknown>;
  /** The JSON Schema of the output fields (a fresh copy each time). */
  outputJsonSchema(): Record<string, unknown>;
}

/**
 * Declares the typed inputs and outputs of one model task.
 *
 * ```ts
 * class Classify extends Signature {
 *   static description = "Classify the sentiment of a sentence.";
 *   static input = { sentence: z.string() };
 *   static output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
 * }
 * ```
 */
export class Signature {
  static description: string = "";
  static input: Shape | undefined = undefined;
  static output: Shape = {};

  /** The JSON Schema of the input fields, compiled once per class (a fresh copy each time). */
  static inputJsonSchema(this: SignatureClass): Record<string, unknown> {
    return structuredClone(compiled(this).inputJsonSchema);
  }

  /** The JSON Schema of the output fields, compiled once per class (a fresh copy each time). */
  static outputJsonSchema(this: SignatureClass): Record<string, unknown> {
    return structuredClone(compiled(this).outputJsonSchema);
  }

  /** Builds a signature class from a plain object (handy in notebooks). */
  static define<I extends Shape = {}, O extends Shape = Shape>(spec: {
    name?: string;
    description?: string;
    input?: I;
    output: O;
  }): DefinedSignature<I, O> {
    const name = spec.name ?? "AnonymousSignature";
    if (!/^[A-Za-z_$][\w$]*$/.test(name)) {
      throw new ValidationError(`Signature name must be an identifier, got ${JSON.stringify(name)}`, { field: "name" });
    }
    const cls = class extends Signature {};
    Object.defineProperty(cls, "name", { value: name });
    cls.description = spec.description ?? "";
    cls.input = spec.input ?? {};
    cls.output = spec.output;
    return cls as never;
  }
}

/** The class `Signature.define` returns: a Signature subclass with exactly these shapes. */
export interface DefinedSignature<I extends Shape, O extends Shape> extends SignatureClass<I, O> {
  new (): Signature;
  description: string;
  input: I;
  output: O;
}

/** The input shape declared by a signature class (`{}` when it declares none). */
export type InputShapeOf<S> = S extends { input: infer I } ? (I extends Shape ? I : {}) : {};
/** The output shape declared by a signature class. */
export type OutputShapeOf<S> = S extends { output: infer O } ? (O extends Shape ? O : {}) : {};
