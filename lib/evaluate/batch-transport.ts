// Moved to lib/batch/transport.ts (shared with `program.batch`); this name keeps existing imports working.
export { batchSettings, providerTransport, type BatchOption, type BatchProgress, type BatchSettings } from "../batch/transport.js";
