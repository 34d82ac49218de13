// Moved to lib/batch/pacer.ts (shared with `program.batch`); this name keeps existing imports working.
export * from "../batch/pacer.js";
