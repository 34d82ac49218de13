import { z } from "zod";
import { Temporal } from "temporal-polyfill";

export { Temporal };

/** Marks the zod schemas made by `t.*`, so schema renderers and converters know what they are. */
export type TemporalKind = "date" | "datetime";

/**
 * Reads the temporal kind of a schema made by `t.date()` / `t.dateTime()`. The marker lives on the
 * schema's definition object, which zod shares with every clone (`.describe()`, `.meta()`).
 */
export function temporalKind(schema: z.ZodType): TemporalKind | undefined {
  return (schema._zod.def as { typelmTemporal?: TemporalKind }).typelmTemporal;
}

function marked<O, I>(kind: TemporalKind, check: (v: unknown) => boolean, message: string) {
  const schema = z.custom<O>(check, { message });
  (schema._zod.def as { typelmTemporal?: TemporalKind }).typelmTemporal = kind;
  // Inputs may be ISO 8601 strings; the converters turn them into the Temporal value.
  return schema as unknown as z.ZodCustom<O, I>;
}

export const t = {
  /** A calendar date without a time zone (`Temporal.PlainDate`, wire `YYYY-MM-DD`). */
  date: () =>
    marked<Temporal.PlainDate, Temporal.PlainDate | string>(
      "date", (v) => v instanceof Temporal.PlainDate, "expected a calendar date (YYYY-MM-DD)"),
  /** A date and time that keeps its UTC offset (`Temporal.ZonedDateTime` in a fixed-offset zone). */
  dateTime: () =>
    marked<Temporal.ZonedDateTime, Temporal.ZonedDateTime | string>(
      "datetime", (v) => v instanceof Temporal.ZonedDateTime, "expected a date-time with offset (YYYY-MM-DDTHH:MM:SS+00:00)"),
};
