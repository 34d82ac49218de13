import { loadOnFirstUse } from "../load-sync.js";
import type { z } from "zod";
import type * as Polyfill from "temporal-polyfill";
import { mediaTypes } from "../media/field.js";
import { dateField, dateTimeField } from "./temporal-fields.js";

type TemporalApi = typeof Polyfill.Temporal;

let api: TemporalApi | undefined;
const polyfill = loadOnFirstUse<typeof Polyfill>("temporal-polyfill", "temporal-polyfill.cjs");

/**
 * The Temporal implementation, loaded at first use: Node's built-in `Temporal` where it has one, else
 * the `temporal-polyfill` package, loaded synchronously (Node 20.19 and later `require` an ES module), so
 * `import "typelm"` does not pay for it.
 */
export function temporalApi(): TemporalApi {
  if (api === undefined) {
    const builtIn = (globalThis as { Temporal?: TemporalApi }).Temporal;
    api = builtIn ?? polyfill().Temporal;
  }
  return api;
}

/** The Temporal implementation if one is loaded (or built in), without loading it. */
export function loadedTemporal(): TemporalApi | undefined {
  return api ?? (globalThis as { Temporal?: TemporalApi }).Temporal;
}

/**
 * The Temporal API (`Temporal.PlainDate`, `Temporal.ZonedDateTime`, `Temporal.Now`, ...): the built-in one
 * where Node has it, else `temporal-polyfill`. The implementation loads the first time a member is read.
 */
export const Temporal: TemporalApi = new Proxy({} as TemporalApi, {
  get: (_target, key) => Reflect.get(temporalApi(), key),
  has: (_target, key) => Reflect.has(temporalApi(), key),
  ownKeys: () => Reflect.ownKeys(temporalApi()),
  getOwnPropertyDescriptor: (_target, key) => {
    const found = Reflect.getOwnPropertyDescriptor(temporalApi(), key);
    return found === undefined ? undefined : { ...found, configurable: true };
  },
});

/** The Temporal types, so `Temporal.PlainDate` and friends also name types. */
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace Temporal {
  /** A calendar date without a time or time zone. */
  type PlainDate = Polyfill.Temporal.PlainDate;
  /** A wall-clock time without a date or time zone. */
  type PlainTime = Polyfill.Temporal.PlainTime;
  /** A calendar date and wall-clock time without a time zone. */
  type PlainDateTime = Polyfill.Temporal.PlainDateTime;
  /** A date and time in a time zone (or at a fixed UTC offset). */
  type ZonedDateTime = Polyfill.Temporal.ZonedDateTime;
  /** An exact point in time, without a calendar or time zone. */
  type Instant = Polyfill.Temporal.Instant;
  /** A length of time in years, months, weeks, days, hours and smaller units. */
  type Duration = Polyfill.Temporal.Duration;
  /** A year and month without a day. */
  type PlainYearMonth = Polyfill.Temporal.PlainYearMonth;
  /** A month and day without a year. */
  type PlainMonthDay = Polyfill.Temporal.PlainMonthDay;
  /** What a `PlainDate` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type PlainDateLike = Polyfill.Temporal.PlainDateLike;
  /** What a `PlainTime` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type PlainTimeLike = Polyfill.Temporal.PlainTimeLike;
  /** What a `PlainDateTime` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type PlainDateTimeLike = Polyfill.Temporal.PlainDateTimeLike;
  /** What a `ZonedDateTime` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type ZonedDateTimeLike = Polyfill.Temporal.ZonedDateTimeLike;
  /** What an `Instant` can be made from: an `Instant`, a `ZonedDateTime`, or an ISO 8601 string. */
  type InstantLike = Polyfill.Temporal.InstantLike;
  /** What a `Duration` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type DurationLike = Polyfill.Temporal.DurationLike;
  /** What a `PlainYearMonth` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type PlainYearMonthLike = Polyfill.Temporal.PlainYearMonthLike;
  /** What a `PlainMonthDay` can be made from: a Temporal value, an object of fields, or an ISO 8601 string. */
  type PlainMonthDayLike = Polyfill.Temporal.PlainMonthDayLike;
  /** A time zone: a `ZonedDateTime` (its zone) or a string (an IANA name or a UTC offset). */
  type TimeZoneLike = Polyfill.Temporal.TimeZoneLike;
  /** A calendar: a Temporal value that carries one, or a calendar identifier. */
  type CalendarLike = Polyfill.Temporal.CalendarLike;
  /** A unit of a date (year, month, week, day). */
  type DateUnit = Polyfill.Temporal.DateUnit;
  /** A unit of a time (hour down to nanosecond). */
  type TimeUnit = Polyfill.Temporal.TimeUnit;
}

/** Marks the zod schemas made by `t.*`, so schema renderers and converters know what they are. */
export type TemporalKind = "date" | "datetime";

/**
 * Reads the temporal kind of a schema made by `t.date()` / `t.dateTime()`. The marker lives on the
 * schema's definition object, which zod shares with every clone (`.describe()`, `.meta()`).
 */
export function temporalKind(schema: z.ZodType): TemporalKind | undefined {
  return (schema._zod.def as { typelmTemporal?: TemporalKind }).typelmTemporal;
}

/**
 * Field types for signatures and tools: `t.date()` (`Temporal.PlainDate`) and `t.dateTime()` (`Temporal.ZonedDateTime` with its offset), both accepting ISO 8601 strings;
 * `t.image()`, `t.audio()` and `t.document()` (media inputs, see lib/media/).
 */
export const t = {
  ...mediaTypes,
  /** A calendar date without a time zone (`Temporal.PlainDate`, wire `YYYY-MM-DD`). */
  date: (): z.ZodCustom<Temporal.PlainDate, Temporal.PlainDate | string> => dateField(),
  /** A date and time that keeps its UTC offset (`Temporal.ZonedDateTime` in a fixed-offset zone). */
  dateTime: (): z.ZodCustom<Temporal.ZonedDateTime, Temporal.ZonedDateTime | string> => dateTimeField(),
};
