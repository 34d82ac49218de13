import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Predict, Prediction, Signature, t, type StreamEvent } from "../../lib/index.js";
import { resetAfterEach } from "../helpers/scripted.js";
import { ChunkedLM } from "../helpers/chunked-lm.js";

resetAfterEach();

const Report = Signature.define({
  name: "Report",
  description: "Report on the text.",
  input: { text: z.string() },
  output: {
    title: z.string(),
    due: t.date(),
    count: z.number().int(),
    tags: z.array(z.string()),
    owner: z.object({ name: z.string(), level: z.enum(["low", "high"]) }),
    note: z.string().nullable(),
  },
});

// Replies as models write them, read by call() (extraction, repairs) and by stream() alike.
const replies: Array<[string, "json" | "toon", string]> = [
  ["bare JSON", "json", '{"title": "Q3 \\"plan\\"", "due": "2026-03-01", "count": "4", "tags": ["a", "b"], "owner": {"name": "Ann", "level": "HIGH"}, "note": null}'],
  ["fenced JSON with a raw newline and trailing commas", "json", 'Here it is:\n```json\n{"title": "two\nlines", "due": "2026-03-01", "count": 4, "tags": ["a",], "owner": {"name": "Ann", "level": "low",}, "note": "n",}\n```\nThanks.'],
  ["TOON in a fence", "toon", '```toon\ntitle: "Q3 plan"\ndue: 2026-03-01\ncount: 4\ntags[2]: a,b\nowner:\n  name: Ann\n  level: high\nnote: null\n```'],
  ["bare TOON", "toon", 'title: plan\ndue: 2026-03-01\ncount: 4\ntags[1]: x\nowner:\n  name: Bo\n  level: low\nnote: "last"'],
];

describe("stream() reads every reply as call() does", () => {
  for (const [label, dataFormat, reply] of replies) {
    for (const chunkSize of [1, 3, 17]) {
      it(`${label}, chunks of ${chunkSize}: field events and result equal call()'s prediction`, async () => {
        const expected = await new Predict(Report).call({ text: "x" }, { lm: new ChunkedLM([reply], { dataFormat }) });
        const lm = new ChunkedLM([reply], { dataFormat, chunkSize });
        const s = new Predict(Report).stream({ text: "x" }, { lm });
        const events: StreamEvent<any>[] = [];
        for await (const e of s) events.push(e);
        const r = await s.result;
        expect(r).toBeInstanceOf(Prediction);
        expect(r.toJSON()).toEqual(expected.toJSON());
        const fields = events.flatMap((e) => (e.type === "field" ? [[e.name, e.value]] : []));
        expect(Object.fromEntries(fields)).toEqual(expected.toJSON());
        expect(fields).toHaveLength(Object.keys(expected.toJSON()).length);
      });
    }
  }
});
