// Runs for the matrix's suites, added to the viewer's fixture lab on either engine: three evaluations
// of the same 40 examples (the second written in reverse index order, so it lines up by example id,
// not by position; the third with a failed example), and one over another set of examples.
import type { LabStore } from "../../lib/store/lab-store.js";
import { fixtureOn, openWriter, row, type Engine, type Fixture } from "./fixture.js";

/** Where each run of the matrix fixture scores 0: by example number (0–39). */
export const WRONG = {
  first: (i: number) => i % 5 === 0,
  second: (i: number) => i % 4 === 0,
  third: (i: number) => i % 5 === 0 || i === 7,
};

export const EXAMPLES = 40;

export interface MatrixFixture {
  fixture: Fixture;
  location: string;
  stop: () => Promise<void>;
  /** The three runs over the same examples, oldest first. */
  runs: [string, string, string];
  /** A run over examples 20–59. */
  otherSet: string;
}

/** The viewer's fixture on `engine` with the matrix's runs added. */
export async function matrixFixture(engine: Engine, extend?: (lab: LabStore) => void): Promise<MatrixFixture> {
  const { fixture, location, stop } = await fixtureOn(engine, extend);
  const writer = openWriter(engine, location);
  const config = { metrics: ["accuracy"], models: ["openai/gpt-4o-mini"], examples: EXAMPLES };
  const write = (name: string, model: string, wrong: (i: number) => boolean, order: number[], failed?: number) => {
    const id = writer.startRun({ kind: "evaluation", name, config: { ...config, models: [model] } });
    let right = 0;
    // Each row's index is its place in the writing order; its example id says which example it is.
    order.forEach((i, index) => {
      const label = row(i).expected["sentiment"];
      const bad = wrong(i);
      if (!bad) right++;
      writer.recordExample(id, {
        ...row(i), index, prediction: i === failed ? null : { sentiment: bad ? "wrong" : label }, scores: { accuracy: bad ? 0 : 1 },
        error: i === failed ? "ProviderError: 503 Service Unavailable" : null,
      });
    });
    writer.finishRun(id, { status: "completed", score: right / order.length, summary: { metrics: { accuracy: right / order.length } } });
    return id;
  };
  const forward = Array.from({ length: EXAMPLES }, (_, i) => i);
  const first = write("prompt v1", "openai/gpt-4o-mini", WRONG.first, forward);
  const second = write("prompt v2", "anthropic/claude-x", WRONG.second, [...forward].reverse());
  const third = write("prompt v3", "local/llama", WRONG.third, forward, 7);
  const otherSet = write("another test set", "openai/gpt-4o-mini", WRONG.first, forward.map((i) => i + 20));
  await writer.flush();
  return { fixture, location, stop, runs: [first, second, third], otherSet };
}

/** The examples (0–39) whose scores differ between the three runs, worked out from `WRONG` alone. */
export function disagreeing(): number[] {
  const out: number[] = [];
  for (let i = 0; i < EXAMPLES; i++) {
    const scores = [WRONG.first(i), WRONG.second(i), WRONG.third(i)];
    if (scores.some((s) => s !== scores[0])) out.push(i);
  }
  return out;
}
