// The media values an optimization run can meet in its demos: those of its example pool and of the
// program's own demos, by sha256. A demo set recorded with media references (bootstrap.ts) is read
// back against them, so demos hold the same Image, Audio and Document values as the examples.
import { mediaBySha } from "../media/refs.js";
import type { MediaValue } from "../media/media.js";
import type { Module } from "../module.js";
import type { IdentifiedExample } from "./examples.js";

/** Every media value in the pool's examples and the program's demos, by sha256. */
export function runMedia(pool: readonly IdentifiedExample[], program: Module): Map<string, MediaValue> {
  const demos = program.namedPredictors().flatMap(([, p]) => p.demos);
  return mediaBySha([...pool.map((e) => e.example), ...demos].flatMap((e) => [e.input, e.output]));
}
