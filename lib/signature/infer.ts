import type { z } from "zod";
import type { InputShapeOf, OutputShapeOf, Shape } from "./signature.js";

import type { Temporal } from "temporal-polyfill";

/** Values the converters hand back as they are (not walked into). */
type Leaf = Date | Temporal.PlainDate | Temporal.ZonedDateTime | ((...args: never[]) => unknown);

/** Optional outputs come back as `null` when the model leaves them out, never `undefined` — at every depth. */
type NullForOptional<T> = { [K in keyof T]-?: undefined extends T[K] ? Deep<Exclude<T[K], undefined>> | null : Deep<T[K]> };
type Deep<T> = T extends Leaf ? T
  : T extends readonly (infer E)[] ? Deep<E>[]
  : T extends object ? NullForOptional<T>
  : T;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The input values a caller passes for a shape: defaulted and optional fields may be omitted. */
export type InputOf<I extends Shape> = Simplify<z.input<z.ZodObject<I>>>;
/** The converted output values for a shape. */
export type OutputOf<O extends Shape> = Simplify<NullForOptional<z.output<z.ZodObject<O>>>>;

/** Inputs of a signature class. */
export type SignatureInputs<S> = InputOf<InputShapeOf<S>>;
/** Outputs of a signature class. */
export type SignatureOutputs<S> = OutputOf<OutputShapeOf<S>>;
