// The regression gate (`typelm run --baseline`): a run's test rows paired with a baseline's, per model and metric, and a verdict
// on the primary metric (the experiment's first), from one-sided tests at level `GATE_ALPHA`: `failed`
// when the candidate is significantly worse, `passed` when not failed and the difference's lower bound
// is at or above −tolerance, `inconclusive` otherwise. Other metrics are reported but never decide it.
// One file per part: rows.ts (the vocabulary), baseline.ts (reading the baseline), verdict.ts (the
// decision), output.ts (terminal lines, JUnit XML, GitHub's summary).
export * from "./rows.js";
export * from "./baseline.js";
export * from "./verdict.js";
export * from "./output.js";
