/**
 * Reading the media references a stored row or call holds (refs.ts makes them): whether a value is
 * one, and which values a stored text names. Used by the viewer, the notebook, the CLI and a lab copy,
 * apart from refs.ts so that `import "typelm"` does not carry them.
 */
import type { MediaRef } from "./refs.js";

const SHA256 = /^[0-9a-f]{64}$/;

/** Whether `value` is a stored media reference. */
export function isMediaRef(value: unknown): value is MediaRef {
  const v = value as Partial<MediaRef> | null;
  return typeof v === "object" && v !== null && typeof v.$media === "string" && SHA256.test(v.$media) && typeof v.kind === "string";
}

/** Whether `text` is a sha256 as the `media` table keys values (64 lower-case hex digits). */
export function isSha256(text: string): boolean {
  return SHA256.test(text);
}

/** The sha256 each stored reference in `text` (JSON, escaped or not) names, each once. */
export function mediaHashesIn(text: string, into: Set<string> = new Set()): Set<string> {
  for (const m of text.matchAll(/\$media\\*"\s*:\s*\\*"([0-9a-f]{64})/g)) into.add(m[1]!);
  return into;
}
