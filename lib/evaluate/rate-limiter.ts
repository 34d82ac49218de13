// Moved to lib/batch/rate-limiter.ts (shared with `program.batch`); this name keeps existing imports working.
export { AdaptiveConcurrency } from "../batch/rate-limiter.js";
