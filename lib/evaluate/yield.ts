// Moved to lib/batch/yield.ts (shared with `program.batch`); this name keeps existing imports working.
export { yieldNowAndThen } from "../batch/yield.js";
