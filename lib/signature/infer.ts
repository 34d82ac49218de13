import type { z } from "zod";
import type { InputShapeOf, OutputShapeOf, Shape } from "./signature.js";

/** Optional outputs come back as `null` when the model leaves them out, never `undefined`. */
type NullForOptional<T> = { [K in keyof T]-?: undefined extends T[K] ? Exclude<T[K], undefined> | null : T[K] };
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The input values a caller passes for a shape: defaulted and optional fields may be omitted. */
export type InputOf<I extends Shape> = Simplify<z.input<z.ZodObject<I>>>;
/** The converted output values for a shape. */
export type OutputOf<O extends Shape> = Simplify<NullForOptional<z.output<z.ZodObject<O>>>>;

/** Inputs of a signature class. */
export type SignatureInputs<S> = InputOf<InputShapeOf<S>>;
/** Outputs of a signature class. */
export type SignatureOutputs<S> = OutputOf<OutputShapeOf<S>>;
