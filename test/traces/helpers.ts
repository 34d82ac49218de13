// Shared by the traces suites: a small program (a module calling a predictor twice) answered by a
// scripted model, and a sink whose writes the test controls.
import { z } from "zod";
import { Module } from "../../lib/module.js";
import { Predict } from "../../lib/predict/predict.js";
import { Signature } from "../../lib/signature/signature.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import type { TraceSink } from "../../lib/traces/recorder.js";
import type { TraceRecord } from "../../lib/trace-call.js";

export const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });

/** Two model calls per call: shout the word, then shout it again. */
export class Shouter extends Module<{ word: string }, { loud: string }> {
  first = new Predict(Upper);
  second = new Predict(Upper);
  async forward(inputs: { word: string }) {
    const a = await this.first.call(inputs);
    return this.second.call({ word: String(a.loud) });
  }
}

/** A model that shouts each word back (fails on the word "boom"). */
export function shoutingLM(): ScriptedLM {
  return new ScriptedLM((req) => {
    const word = String(req.inputs?.word ?? "");
    if (word === "boom") return "not a reply at all";
    return { loud: word.toUpperCase() };
  });
}

/** A sink that records each batch and, while `hold` is set, keeps each write pending until `release()`. */
export function controlledSink() {
  const batches: TraceRecord[][] = [];
  let release: () => void = () => undefined;
  let held: Promise<void> | null = null;
  let firstWrite: () => void = () => undefined;
  const wrote = new Promise<void>((resolve) => { firstWrite = resolve; });
  const sink: TraceSink & { batches: TraceRecord[][]; wrote: Promise<void>; hold(): void; release(): void } = {
    batches,
    wrote,
    write(batch) {
      batches.push([...batch]);
      firstWrite();
      return held ?? undefined;
    },
    hold() {
      held = new Promise<void>((resolve) => { release = resolve; });
    },
    release() {
      held = null;
      release();
    },
  };
  return sink;
}
