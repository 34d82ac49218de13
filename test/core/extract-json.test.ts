import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { extractJson } from "../../lib/strategy/extract-json.js";
import { OutputError } from "../../lib/errors.js";

describe("extractJson", () => {
  it("parses bare JSON", () => {
    expect(extractJson('{"a": 1, "b": "x"}')).toEqual({ a: 1, b: "x" });
  });

  it("takes the JSON from a fenced ```json block surrounded by prose", () => {
    const reply = 'Sure! Here it is:\n```json\n{"answer": "Paris"}\n```\nHope that helps.';
    expect(extractJson(reply)).toEqual({ answer: "Paris" });
  });

  it("prefers the ```json block over other fenced blocks", () => {
    const reply = '```text\nnot json\n```\n```json\n{"n": 2}\n```';
    expect(extractJson(reply)).toEqual({ n: 2 });
  });

  it("finds a JSON object inside prose without a fence", () => {
    expect(extractJson('The result is {"sentiment": "positive", "note": "a } in text"} as requested.')).toEqual({
      sentiment: "positive",
      note: "a } in text",
    });
  });

  it("repairs raw newlines and tabs inside strings", () => {
    const reply = '{"text": "line one\nline\ttwo"}';
    expect(extractJson(reply)).toEqual({ text: "line one\nline\ttwo" });
  });

  it("repairs a trailing comma in objects and arrays", () => {
    expect(extractJson('{"a": [1, 2, 3,], "b": true,}')).toEqual({ a: [1, 2, 3], b: true });
  });

  it("raises OutputError keeping the raw reply when the reply holds no JSON", () => {
    const reply = "I am sorry, I cannot answer that.";
    let caught: unknown;
    try {
      extractJson(reply);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(OutputError);
    const err = caught as OutputError;
    expect(err.raw).toBe(reply);
    expect(err.expected).toBe("a JSON object");
    expect(err.message).toContain("I am sorry");
  });

  it("parses every reply recorded from real models in the shared fixtures to the values the model wrote", () => {
    const fixtures = JSON.parse(readFileSync(new URL("../fixtures/recorded-replies.json", import.meta.url), "utf8")) as {
      cassette: string; content: string;
    }[];
    // Read off each recorded reply by hand.
    const expected: Record<string, unknown> = {
      "chain_of_thought_simple.yml": {
        answer: "Paris",
        reasoning:
          "To determine the capital of France, we can refer to geographical knowledge. France is a country in Europe, " +
          "and its capital city is widely recognized as Paris. This information is commonly found in educational " +
          "resources and is a well-known fact.",
      },
      "ollama_chain_of_thought.yml": {
        answer: 150,
        reasoning:
          "To find the distance traveled, we multiply the speed (60 mph) by the time (2.5 hours). " +
          "This gives us: distance = speed * time = 60 * 2.5 = 150 miles.",
      },
      "ollama_structured_qa.yml": { answer: "Paris", confidence: 0.9 },
      "ollama_structured_weather.yml": { temperature: 58, conditions: "Mostly Cloudy", humidity: 67 },
      "predict_simple.yml": { sentiment: "positive", confidence: 0.95 },
    };
    expect(fixtures.map((f) => f.cassette).sort()).toEqual(Object.keys(expected).sort());
    for (const f of fixtures) {
      expect({ cassette: f.cassette, value: extractJson(f.content) }).toEqual({ cassette: f.cassette, value: expected[f.cassette] });
    }
  });
});
