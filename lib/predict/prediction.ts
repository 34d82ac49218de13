import type { TokenUsage } from "../lm/types.js";

/** What a prediction knows about how it was made (not part of its fields). */
export interface PredictionMeta {
  /** The model's raw reply text. */
  raw: string;
  usage: TokenUsage;
  model: string;
  cached: boolean;
}

const metas = new WeakMap<object, PredictionMeta>();

/**
 * A prediction: each output field as a property, already converted to its declared type.
 * `toJSON()` gives the plain values (dates in their ISO 8601 wire form via their own toJSON).
 */
export class Prediction {
  constructor(values: Record<string, unknown>, meta?: PredictionMeta) {
    Object.assign(this, values);
    if (meta) metas.set(this, meta);
  }

  /** The output fields as a plain object (the raw reply, usage and model are not included). */
  toJSON(): Record<string, unknown> {
    return { ...(this as object) } as Record<string, unknown>;
  }

  /** How the prediction was made: raw reply, usage, model; undefined for predictions built by hand. */
  static meta(prediction: object): PredictionMeta | undefined {
    return metas.get(prediction);
  }
}

/**
 * A prediction typed with its output fields. For an unknown shape (`Predict` with its default type
 * arguments) the fields are `any`, so every typed predictor is assignable to a plain `Predict`.
 */
export type Typed<O> = string extends keyof O ? Prediction & Record<string, any> : Prediction & O;
