// MIPROv2's split of the examples into a demo pool and validation examples: used by its run and its
// estimate, both loaded at first use (mipro-run.ts, mipro-estimate.ts), so `import "typelm"` skips it.
import { canonicalJson } from "../canonical-json.js";
import { ValidationError } from "../errors.js";
import { Random } from "../random.js";
import type { IdentifiedExample as Example } from "./examples.js";

/** Share of the training examples that become validation examples when none are given (DSPy: 80%, at most 1000). */
const SPLIT_VALIDATION_SHARE = 0.8;
const SPLIT_VALIDATION_MAX = 1000;

/** Where the demos come from and what is scored. @internal */
export interface Split {
  pool: Example[];
  val: Example[];
  validation: "given" | "split";
  /** Training examples left out of the demo pool because a validation example has the same inputs. */
  droppedFromPool: number;
  /**
   * Given validation examples that are also in the demo pool (the pool would have been smaller
   * than kDemos without them): when one is scored, its own demo is taken out of that prompt.
   */
  shared: number;
}

/**
 * The demo pool and the validation examples. Without validation examples: a seeded shuffle of the
 * training examples, 80% (at most 1000) validation and the rest the demo pool, as DSPy does. With
 * them: the training examples are the pool, less any whose inputs a validation example has — unless
 * that leaves fewer than kDemos (e.g. the same list given twice), in which case they stay and each
 * is left out of its own prompt when scored (`withoutOwnDemos`). Either way no example is ever
 * scored while it is a demo in its own prompt. @internal
 */
export function splitExamples(train: Example[], given: Example[] | undefined, seed: number, kDemos: number): Split {
  let split: Split;
  if (given === undefined) {
    if (train.length < 2) {
      throw new ValidationError(
        "MIPROv2.compile: without validationExamples the training examples are split into a demo pool and validation examples, which needs at least 2; " +
          `received ${train.length}. Add training examples or pass validationExamples`,
        { field: "trainingExamples" },
      );
    }
    const shuffled = new Random(seed, "split").shuffle(train);
    const validation = Math.min(SPLIT_VALIDATION_MAX, Math.max(1, Math.floor(train.length * SPLIT_VALIDATION_SHARE)));
    const cut = train.length - validation;
    split = { pool: shuffled.slice(0, cut), val: shuffled.slice(cut), validation: "split", droppedFromPool: 0, shared: 0 };
  } else {
    const scored = new Set(given.map((e) => canonicalJson(e.example.input)));
    const pool = train.filter((e) => !scored.has(canonicalJson(e.example.input)));
    split = pool.length >= Math.max(1, kDemos)
      ? { pool, val: given, validation: "given", droppedFromPool: train.length - pool.length, shared: 0 }
      : { pool: train, val: given, validation: "given", droppedFromPool: 0, shared: train.length - pool.length };
  }
  if (kDemos > split.pool.length) {
    const where = split.validation === "split"
      ? `the demo pool holds ${split.pool.length} (20% of the ${train.length} training examples; the other 80% are the validation examples)`
      : `there are only ${train.length} training examples to draw demos from`;
    throw new ValidationError(
      `MIPROv2 kDemos is ${kDemos} but ${where}: lower kDemos to at most ${split.pool.length}, add training examples, or pass validationExamples`,
      { field: "kDemos" },
    );
  }
  return split;
}
