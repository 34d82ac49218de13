/**
 * The words the statistics report in (used by `report.ci`, `compare` and the viewer): an interval, the
 * method behind it, the test behind a p-value, and the one seed every random stream starts from, so
 * that the same scores give the same intervals and p-values on every run and machine.
 */

/** A confidence interval: `[low, high]`. */
export type Interval = [low: number, high: number];

/**
 * How an interval was computed: `"wilson"` (the modified Wilson interval of a share), `"bootstrap-bca"`
 * (bias-corrected and accelerated bootstrap), `"clopper-pearson"` (a paired difference of 0/1 scores:
 * the exact interval of the share of improved among the changed examples, scaled),
 * `"sign-flip-inversion"` and `"permutation-macro-f1-inversion"` (a paired difference: the shifts the
 * sign-flip or the macro-F1 permutation test does not reject).
 */
export type CiMethod = "wilson" | "bootstrap-bca" | "clopper-pearson" | "sign-flip-inversion" | "permutation-macro-f1-inversion";

/** Which test gave a p-value. */
export type PairedTest = "mcnemar-exact" | "sign-flip" | "permutation-macro-f1";

/** The seed of every resampling and permutation stream. */
export const SEED = 0;
