import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { Temporal, t } from "../../lib/signature/temporal.js";
import { Signature } from "../../lib/signature/signature.js";
import { compiled } from "../../lib/signature/compile.js";
import { OutputError } from "../../lib/errors.js";
import { convertValue } from "../../lib/convert/output.js";
import { validateInputs } from "../../lib/convert/input.js";
import { inputsToWire, valueToWire } from "../../lib/signature/wire.js";

// These assertions must hold in every host time zone; timezones.test.ts re-runs this file under
// TZ=America/Los_Angeles and TZ=Asia/Tokyo.

const expectedOffset = process.env.TYPELM_EXPECT_TZ_OFFSET;
if (expectedOffset !== undefined) {
  describe("host time zone", () => {
    it("is the zone the parent run asked for", () => {
      expect(new Date(2024, 0, 1).getTimezoneOffset()).toBe(Number(expectedOffset));
    });
  });
}

describe("t.date outputs", () => {
  it("converts YYYY-MM-DD to a Temporal.PlainDate", () => {
    const d = convertValue(t.date(), "2024-05-01", "d", "") as Temporal.PlainDate;
    expect(d).toBeInstanceOf(Temporal.PlainDate);
    expect(d.toString()).toBe("2024-05-01");
  });

  it.each([
    ["2024-05-01T23:30:00-07:00", "2024-05-01"],
    ["2024-05-01T00:30:00+09:00", "2024-05-01"],
    ["2024-12-31T23:59:59Z", "2024-12-31"],
    ["2024-01-01T00:00:00.000Z", "2024-01-01"],
  ])("takes the calendar date of %s as written (%s), never shifted by the host zone", (text, day) => {
    expect((convertValue(t.date(), text, "d", "") as Temporal.PlainDate).toString()).toBe(day);
  });

  it("rejects an impossible date", () => {
    expect(() => convertValue(t.date(), "2024-02-30", "d", "")).toThrow(OutputError);
    expect(() => convertValue(t.date(), "next tuesday", "d", "")).toThrow(/expected date \(YYYY-MM-DD\)/);
  });
});

describe("t.dateTime outputs", () => {
  it("keeps the written offset in a fixed-offset zone", () => {
    const v = convertValue(t.dateTime(), "2024-05-01T10:00:00+02:00", "d", "") as Temporal.ZonedDateTime;
    expect(v).toBeInstanceOf(Temporal.ZonedDateTime);
    expect(v.offset).toBe("+02:00");
    expect(v.timeZoneId).toBe("+02:00");
    expect(v.hour).toBe(10);
    expect(valueToWire(t.dateTime(), v)).toBe("2024-05-01T10:00:00+02:00");
  });

  it("reads Z as +00:00 and text without an offset as UTC", () => {
    expect(valueToWire(undefined, convertValue(t.dateTime(), "2024-05-01T10:00:00Z", "d", ""))).toBe("2024-05-01T10:00:00+00:00");
    expect(valueToWire(undefined, convertValue(t.dateTime(), "2024-05-01T10:00:00", "d", ""))).toBe("2024-05-01T10:00:00+00:00");
  });

  it("rejects text that is not a date-time", () => {
    expect(() => convertValue(t.dateTime(), "10 o'clock", "d", "")).toThrow(OutputError);
  });
});

describe("z.date outputs (instants)", () => {
  it("converts ISO text with an offset to the UTC instant", () => {
    expect((convertValue(z.date(), "2024-05-01T10:00:00+02:00", "d", "") as Date).toISOString()).toBe("2024-05-01T08:00:00.000Z");
  });

  it("reads text without an offset as UTC, not as host-local time", () => {
    expect((convertValue(z.date(), "2024-05-01T10:00:00", "d", "") as Date).toISOString()).toBe("2024-05-01T10:00:00.000Z");
    expect((convertValue(z.date(), "2024-05-01", "d", "") as Date).toISOString()).toBe("2024-05-01T00:00:00.000Z");
  });
});

describe("date inputs", () => {
  const Sig = Signature.define({
    name: "Dates",
    input: {
      day: t.date(),
      at: t.dateTime(),
      when: z.date(),
      trips: z.array(z.object({ start: t.date(), legs: z.array(t.dateTime()).default([]) })).optional(),
    },
    output: { ok: z.boolean() },
  });

  it("converts ISO strings, also nested in arrays and objects, to the declared types", () => {
    const v = validateInputs(compiled(Sig), {
      day: "2024-05-01",
      at: "2024-05-01T10:00:00+02:00",
      when: "2024-05-01T10:00:00Z",
      trips: [{ start: "2024-06-30", legs: ["2024-06-30T23:00:00-07:00"] }],
    });
    expect(v.day).toBeInstanceOf(Temporal.PlainDate);
    expect((v.at as Temporal.ZonedDateTime).offset).toBe("+02:00");
    expect(v.when).toBeInstanceOf(Date);
    const trip = (v.trips as Array<{ start: Temporal.PlainDate; legs: Temporal.ZonedDateTime[] }>)[0];
    expect(trip?.start.toString()).toBe("2024-06-30");
    expect(trip?.legs[0]?.offset).toBe("-07:00");
  });

  it("writes dates to the wire as YYYY-MM-DD, offset date-times and Z instants", () => {
    const sig = compiled(Sig);
    const wire = inputsToWire(sig, validateInputs(sig, {
      day: Temporal.PlainDate.from("2024-05-01"),
      at: "2024-05-01T10:00:00+02:00",
      when: new Date(Date.UTC(2024, 4, 1, 8)),
      trips: [{ start: "2024-06-30" }],
    }));
    expect(wire).toEqual({
      day: "2024-05-01",
      at: "2024-05-01T10:00:00+02:00",
      when: "2024-05-01T08:00:00.000Z",
      trips: [{ start: "2024-06-30", legs: [] }],
    });
    expect(JSON.parse(JSON.stringify(wire))).toEqual(wire);
  });

  it("names the nested field of an unparseable date input", () => {
    expect(() => validateInputs(compiled(Sig), {
      day: "2024-05-01", at: "2024-05-01T10:00:00Z", when: "2024-05-01T10:00:00Z", trips: [{ start: "soon" }],
    })).toThrow(expect.objectContaining({ field: "trips[0].start" }));
  });
});
