// The task and fake provider the rate-limit and pacing suites share: a two-label sentiment signature,
// and a provider that answers it after 5 ms ("odd" in the sentence makes it negative).
import { z } from "zod";
import { Signature } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";

export class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

export function startSentimentProvider(): Promise<FakeProvider> {
  return startFakeProvider({
    defaultReply: async (req) => {
      await new Promise((r) => setTimeout(r, 5));
      return { sentiment: /odd/.test(req.messages.at(-1)?.content ?? "") ? "negative" : "positive" };
    },
  });
}
