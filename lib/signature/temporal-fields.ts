/**
 * The schemas of `t.date()` and `t.dateTime()` (lib/signature/temporal.ts): zod custom types that take a
 * Temporal value, marked with their kind on the definition so renderers and converters know them. The
 * bundle loads this module at the first date field made (scripts/deferred-modules.mjs).
 */
import { z } from "zod";
import { Temporal, type TemporalKind } from "./temporal.js";

function marked<O, I>(kind: TemporalKind, check: (v: unknown) => boolean, message: string): z.ZodCustom<O, I> {
  const schema = z.custom<O>(check, { message });
  (schema._zod.def as { typelmTemporal?: TemporalKind }).typelmTemporal = kind;
  // Inputs may be ISO 8601 strings; the converters turn them into the Temporal value.
  return schema as unknown as z.ZodCustom<O, I>;
}

/** `t.date()`: a calendar date without a time zone (`Temporal.PlainDate`, wire `YYYY-MM-DD`). */
export function dateField(): z.ZodCustom<Temporal.PlainDate, Temporal.PlainDate | string> {
  return marked<Temporal.PlainDate, Temporal.PlainDate | string>(
    "date", (v) => v instanceof Temporal.PlainDate, "expected a calendar date (YYYY-MM-DD)");
}

/** `t.dateTime()`: a date and time that keeps its UTC offset (`Temporal.ZonedDateTime` in a fixed-offset zone). */
export function dateTimeField(): z.ZodCustom<Temporal.ZonedDateTime, Temporal.ZonedDateTime | string> {
  return marked<Temporal.ZonedDateTime, Temporal.ZonedDateTime | string>(
    "datetime", (v) => v instanceof Temporal.ZonedDateTime, "expected a date-time with offset (YYYY-MM-DDTHH:MM:SS+00:00)");
}
