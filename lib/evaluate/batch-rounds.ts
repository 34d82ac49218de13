// Moved to lib/batch/rounds.ts (shared with `program.batch`); this name keeps existing imports working.
export { runInRounds, type BatchTransport, type RoundsOptions, type RoundsResult } from "../batch/rounds.js";
