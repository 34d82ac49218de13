// The task of the batch tests: shout a word, then count the letters of what was shouted (a two-step
// program whose second request exists only once the first is answered).
import { z } from "zod";
import { Module, Predict, Signature } from "../../lib/index.js";

export const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
export const Count = Signature.define({ name: "Count", description: "Count the letters.", input: { loud: z.string() }, output: { letters: z.number() } });

export class ShoutAndCount extends Module<{ word: string }, { loud: string; letters: number }> {
  shout = new Predict(Upper);
  count = new Predict(Count);
  async forward(inputs: { word: string }) {
    const { loud } = await this.shout.call(inputs);
    const { letters } = await this.count.call({ loud });
    return { loud, letters };
  }
}

/** What a model answers to a request whose last user message is `last`: the word shouted, or the letters counted. */
export function answerFor(last: string): Record<string, unknown> {
  const word = /"word":\s*"([^"]+)"/.exec(last)?.[1];
  if (word !== undefined) return { loud: word.toUpperCase() };
  return { letters: /"loud":\s*"([^"]+)"/.exec(last)?.[1]?.length ?? 0 };
}
