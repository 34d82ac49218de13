// The lab_texts hashes a row's recorded calls refer to (stored-calls.ts writes and reads the calls):
// for a PostgreSQL read, a lab copy and the viewer, apart from stored-calls.ts so that
// `import "typelm"` does not carry it.
import type { CompactCall, StoredCall } from "./stored-calls.js";

/** The hashes of lab_texts a row's `calls_json` refers to. */
export function callTextHashes(json: string): string[] {
  const hashes = new Set<string>();
  for (const c of JSON.parse(json) as (CompactCall | StoredCall)[]) {
    if ("q" in c) {
      for (const m of c.q) if (m[1] === "#") hashes.add(m.slice(2));
    } else {
      for (const m of c.messages) if (m.text !== undefined) hashes.add(m.text);
      if (c.replyHash !== undefined) hashes.add(c.replyHash);
    }
  }
  return [...hashes];
}
