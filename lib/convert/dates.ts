import { Temporal } from "../signature/temporal.js";

// Parsing is done on the text as written, never through the host time zone: a calendar date must not
// move by a day because the process runs in Tokyo or Los Angeles, so JS `Date` is kept away from it.

const DATE_PREFIX = /^\s*([+-]?\d{4,6}-\d{2}-\d{2})(?:[T\s].*)?$/i;
const DATE_TIME =
  /^\s*(\d{4}-\d{2}-\d{2})(?:[T\s](\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?))?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?(?:\[[^\]]*\])?\s*$/i;

/** "2024-05-01" (or a full date-time, whose calendar date is taken as written) → PlainDate. */
export function parsePlainDate(text: string): Temporal.PlainDate | undefined {
  const m = DATE_PREFIX.exec(text);
  if (m === null) return undefined;
  try {
    return Temporal.PlainDate.from(m[1] as string, { overflow: "reject" });
  } catch {
    return undefined;
  }
}

/** Splits an ISO date-time into a local date-time and an offset in `+HH:MM` form (`Z` → `+00:00`). */
function splitDateTime(text: string): { local: string; offset: string | undefined } | undefined {
  const m = DATE_TIME.exec(text);
  if (m === null) return undefined;
  const date = m[1] as string;
  const time = (m[2] ?? "00:00:00").replace(",", ".");
  let offset = m[3];
  if (offset !== undefined) {
    if (offset.toUpperCase() === "Z") offset = "+00:00";
    else if (/^[+-]\d{2}$/.test(offset)) offset = `${offset}:00`;
    else if (/^[+-]\d{4}$/.test(offset)) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  }
  return { local: `${date}T${time}`, offset };
}

/**
 * ISO date-time → ZonedDateTime in a fixed-offset zone that keeps the written offset
 * (`…+02:00` stays +02:00). Text without an offset is read as UTC, the only reading that does not
 * depend on where the process runs.
 */
export function parseZonedDateTime(text: string): Temporal.ZonedDateTime | undefined {
  const parts = splitDateTime(text);
  if (parts === undefined) return undefined;
  const offset = parts.offset ?? "+00:00";
  try {
    const local = Temporal.PlainDateTime.from(parts.local, { overflow: "reject" });
    return local.toZonedDateTime(offset);
  } catch {
    return undefined;
  }
}

/** ISO date-time → JS Date (an instant). Text without an offset is read as UTC, not host-local. */
export function parseInstant(text: string): Date | undefined {
  const parts = splitDateTime(text);
  if (parts === undefined) return undefined;
  try {
    const local = Temporal.PlainDateTime.from(parts.local, { overflow: "reject" });
    const zoned = local.toZonedDateTime(parts.offset ?? "+00:00");
    return new Date(zoned.epochMilliseconds);
  } catch {
    return undefined;
  }
}
