import { z } from "zod";
import { ReAct, Signature, tool, type LanguageModel, type ReActStep } from "typelm";

const Trip = Signature.define({
  name: "Trip",
  description: "Plan the day from the weather in both cities.",
  input: { from: z.string(), to: z.string() },
  output: { advice: z.string(), warmer: z.string() },
});

const weather = tool({
  name: "weather",
  description: "Current temperature of a city, in °C",
  input: { city: z.string() },
  call: async ({ city }) => ({ city, celsius: city === "Lisbon" ? 21 : 9 }),
});

/** Asks with native tool calling: the model may call `weather` for both cities in one turn; both run at once. */
export async function planTrip(from: string, to: string, lm: LanguageModel): Promise<{ advice: string; warmer: string; history: ReActStep[] }> {
  const agent = new ReAct(Trip, { tools: [weather], toolCalling: "native" });
  const { advice, warmer, history } = await agent.call({ from, to }, { lm });
  return { advice, warmer, history }; // history: one ReActStep per tool call, each with its callId
}
