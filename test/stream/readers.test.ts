import { describe, expect, it } from "@jest/globals";
import { JsonReader } from "../../lib/stream/json-reader.js";
import { JsonReplyReader } from "../../lib/stream/json-reply.js";
import { ToonReplyReader } from "../../lib/stream/toon-reply.js";

/** Feeds `text` in pieces of `size` characters; returns the members reported and the reader. */
function readJson(text: string, size: number) {
  const members: Array<[string, unknown]> = [];
  const reader = new JsonReader((name, value) => members.push([name, value]));
  for (let i = 0; i < text.length; i += size) reader.push(text.slice(i, i + size));
  return { members, reader };
}

const SAMPLE = {
  text: 'quote " backslash \\ slash / tab \t newline \n unicode é \u00e9 😀 control \u0001',
  n: -12.5e3, int: 7, t: true, f: false, z: null,
  nested: { list: [1, [2, { deep: "x" }], {}, []], empty: "" },
};

describe("JsonReader", () => {
  for (const size of [1, 2, 3, 7, 1000]) {
    it(`reads JSON written in chunks of ${size} like JSON.parse, member by member`, () => {
      const text = JSON.stringify(SAMPLE, null, size % 2 === 0 ? 2 : undefined);
      const { members, reader } = readJson(text, size);
      expect(Object.fromEntries(members)).toEqual(JSON.parse(text));
      expect(members.map(([k]) => k)).toEqual(Object.keys(SAMPLE));
      expect(reader.finished).toBe(true);
    });
  }

  it("accepts what the reply extractor repairs: raw newlines in strings, trailing commas", () => {
    const { members, reader } = readJson('{"a": "line one\nline\ttwo", "b": [1, 2,], "c": {"d": 1,},}', 3);
    expect(Object.fromEntries(members)).toEqual({ a: "line one\nline\ttwo", b: [1, 2], c: { d: 1 } });
    expect(reader.finished).toBe(true);
  });

  it("stops on text that is not JSON", () => {
    expect(readJson('{"a": 1 "b": 2}', 2).reader.failed).toBe(true);
    expect(readJson('{"a": tru e}', 2).reader.failed).toBe(true);
    expect(readJson('{"a": "\\q"}', 2).reader.failed).toBe(true);
  });

  it("a snapshot shows the open string and open containers; finished values are not changed by later chunks", () => {
    const members: string[] = [];
    const reader = new JsonReader((name) => members.push(name));
    reader.push('{"a": {"b": [1, "tw');
    const first = reader.snapshot();
    expect(first).toEqual({ a: { b: [1, "tw"] } });
    reader.push('o"], "c": "x');
    expect(reader.snapshot()).toEqual({ a: { b: [1, "two"], c: "x" } });
    expect(first).toEqual({ a: { b: [1, "tw"] } });
    reader.push('y"}, "d": 1}');
    expect(reader.snapshot()).toEqual({ a: { b: [1, "two"], c: "xy" }, d: 1 });
    expect(members).toEqual(["a", "d"]);
  });

  it('a "__proto__" key stays a key: no prototype is set in values or snapshots', () => {
    const reader = new JsonReader(() => undefined);
    reader.push('{"__proto__": {"polluted": 1}, "a": {"__proto__": {"x": 1}, "b": "o');
    const snap = reader.snapshot() as Record<string, unknown>;
    expect(Object.getPrototypeOf(snap)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(snap)).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(snap.a)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    reader.push('k"}}');
    expect(JSON.stringify(reader.snapshot())).toBe('{"__proto__":{"polluted":1},"a":{"__proto__":{"x":1},"b":"ok"}}');
  });

  it("escapes split across chunks (\\u in pieces, a backslash at a chunk's end)", () => {
    const { members } = readJson('{"s": "a\\u00e9b\\"c\\\\"}', 1);
    expect(members).toEqual([["s", 'aéb"c\\']]);
  });
});

describe("JsonReplyReader", () => {
  const read = (reply: string, size: number) => {
    const members: Array<[string, unknown]> = [];
    const r = new JsonReplyReader((name, value) => members.push([name, value]));
    let confidentAtEnd = false;
    for (let i = 0; i < reply.length; i += size) {
      r.push(reply.slice(i, i + size));
      confidentAtEnd ||= r.confident;
    }
    return { members, confident: confidentAtEnd };
  };

  for (const size of [1, 2, 5]) {
    it(`finds bare JSON and the first json block, skipping other blocks (chunks of ${size})`, () => {
      expect(read('  \n{"a": 1}', size)).toEqual({ members: [["a", 1]], confident: true });
      expect(read('Sure:\n```json\n{"a": 1}\n```', size)).toEqual({ members: [["a", 1]], confident: true });
      expect(read('```python\nx = {"a": 2}\n```\nthen\n``` JSON \n{"a": 3}\n```', size)).toEqual({ members: [["a", 3]], confident: true });
      // JSON in prose and unlabelled blocks are read only at the end, as the extractor decides.
      expect(read('The answer is {"a": 1}.', size)).toEqual({ members: [], confident: false });
      expect(read('```\n{"a": 1}\n```', size)).toEqual({ members: [], confident: false });
    });
  }
});

describe("ToonReplyReader", () => {
  const read = (reply: string, size: number) => {
    const members: Array<[string, unknown, number]> = [];
    let fed = 0;
    const r = new ToonReplyReader((name, value) => members.push([name, value, fed]));
    for (let i = 0; i < reply.length; i += size) {
      fed = i + size;
      r.push(reply.slice(i, i + size));
    }
    r.end();
    return { members, r };
  };
  const reply = '```toon\nlabel: positive\nscore: 0.5\ntags[2]: a,b\ninfo:\n  x: 1\n  y: "two"\nrows[2]{p,q}:\n  1,2\n  3,4\nnote: "said \\"hi\\"\\nbye"\n```';

  for (const size of [1, 3, 8]) {
    it(`reports each field as its line (or block) completes (chunks of ${size})`, () => {
      const { members } = read(reply, size);
      expect(members.map(([n, v]) => [n, v])).toEqual([
        ["label", "positive"], ["score", 0.5], ["tags", ["a", "b"]], ["info", { x: 1, y: "two" }],
        ["rows", [{ p: 1, q: 2 }, { p: 3, q: 4 }]], ["note", 'said "hi"\nbye'],
      ]);
      const labelLineEnd = reply.indexOf("\n", reply.indexOf("label")) + 1;
      expect(members[0]![2]).toBeLessThan(labelLineEnd + size);
    });
  }

  it("a growing quoted string is unquoted piece by piece", () => {
    const r = new ToonReplyReader(() => undefined);
    r.push('```toon\nnote: "a \\"q');
    expect(r.snapshot()).toEqual({ note: 'a "q' });
    r.push('uoted\\" line\\nnext');
    expect(r.snapshot()).toEqual({ note: 'a "quoted" line\nnext' });
  });
});
