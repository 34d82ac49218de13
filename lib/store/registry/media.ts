// The bytes of media values in a registry version's demos. A version's state holds each image, audio
// clip or document as a reference (kind, type, size, sha256: see media/refs.ts); the bytes are written
// once per sha256 to the folder `media/` beside the lab's SQLite file (`<sha256>.<ext>`), and read back
// (and checked against the hash) when the version is loaded. An in-memory registry keeps them in this
// process; a registry on PostgreSQL does not take media demos yet (a ConfigurationError says so).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ConfigurationError } from "../../errors.js";
import type { MediaValue } from "../../media/media.js";
import { isPostgresUrl } from "../pg.js";

const inMemory = new Map<string, Uint8Array>();

/** The file of a sha256 in a registry's media folder: the name comes from the hash only, never from stored text. */
function mediaFile(location: string, sha256: string): string {
  return join(dirname(location), "media", `${sha256}.bin`);
}

/** Keeps the bytes of each value (by sha256) where `readRegistryMedia` finds them; a file already there is not written again. */
export function keepRegistryMedia(location: string, values: ReadonlyMap<string, MediaValue>, shownPath: string): void {
  if (values.size === 0) return;
  if (isPostgresUrl(location)) {
    throw new ConfigurationError(
      `registry.store: the module's demos hold ${values.size} media value(s), and a registry on PostgreSQL (${shownPath}) cannot keep media bytes yet; ` +
        "store it in a registry on a SQLite file (new Registry({ path })), or remove the media demos",
    );
  }
  for (const [sha, value] of values) {
    if (location === ":memory:") {
      inMemory.set(sha, value.bytes!);
      continue;
    }
    const file = mediaFile(location, sha);
    if (existsSync(file)) continue;
    mkdirSync(dirname(file), { recursive: true });
    // Written under another name and renamed, so a reader never sees half a file.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, value.bytes!);
    renameSync(partial, file);
  }
}

/** The bytes of a sha256 kept by `keepRegistryMedia`, or undefined when there are none. */
export function readRegistryMedia(location: string, sha256: string): Uint8Array | undefined {
  if (location === ":memory:") return inMemory.get(sha256);
  if (isPostgresUrl(location) || !/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  const file = mediaFile(location, sha256);
  return existsSync(file) ? readFileSync(file) : undefined;
}
