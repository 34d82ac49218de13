/**
 * `typelm show`'s media section: one line per media value an evaluation's rows refer to (stored once
 * by sha256 in the lab, see lib/store/media/refs.ts): kind, media type, size, the full hash, and how
 * many rows hold it in which fields. The first `SHOWN` values are listed; the rest are counted.
 */
import { isMediaRef } from "../../store/media/ref-read.js";
import type { MediaRef } from "../../store/media/refs.js";
import type { EvaluationRow } from "../../store/records.js";
import { printable } from "../terminal.js";

const SHOWN = 50;

function collect(value: unknown, path: string, found: (ref: MediaRef, path: string) => void, depth = 0): void {
  if (value === null || typeof value !== "object" || depth > 16) return;
  if (isMediaRef(value)) return found(value, path);
  if (Array.isArray(value)) value.forEach((v, i) => collect(v, `${path}[${i}]`, found, depth + 1));
  else for (const [k, v] of Object.entries(value)) collect(v, `${path}.${k}`, found, depth + 1);
}

/** The media section of `typelm show` for these rows; [] when they hold no media. */
export function mediaLines(rows: readonly EvaluationRow[]): string[] {
  const values = new Map<string, { ref: MediaRef; rows: Set<number>; fields: Set<string> }>();
  for (const row of rows) {
    for (const part of ["inputs", "expected", "prediction"] as const) {
      collect(row[part], part, (ref, path) => {
        let v = values.get(ref.$media);
        if (v === undefined) values.set(ref.$media, (v = { ref, rows: new Set(), fields: new Set() }));
        v.rows.add(row.index);
        v.fields.add(path.replace(/\[\d+\]/g, "[]"));
      });
    }
  }
  if (values.size === 0) return [];
  const all = [...values.values()];
  const out = ["", `media: ${all.length} value${all.length === 1 ? "" : "s"}, each stored once (typelm view shows them)`];
  for (const { ref, rows: used, fields } of all.slice(0, SHOWN)) {
    out.push(`  ${printable(ref.kind)} ${printable(ref.mediaType)} ${ref.size.toLocaleString("en-US")} bytes sha256 ${ref.$media} (${used.size} row${used.size === 1 ? "" : "s"}: ${printable([...fields].join(", "))})`);
  }
  if (all.length > SHOWN) out.push(`  … and ${all.length - SHOWN} more`);
  return out;
}
