import { BaseLM } from "../lm/base.js";
import { replayText, type ChunkPacing } from "../lm/stream-text.js";
import type { ChatOptions, DataFormat, LMRequest, LMResponse, SchemaFormat } from "../lm/types.js";
import { readPrompt, type FieldShape, type ReadPrompt } from "./read-prompt.js";
import { estimatedResponse, writeReply } from "./reply.js";

/**
 * The sampling settings of a request: `temperature` in force (the call's option, else the LM's own)
 * and the call's `rolloutId`; each undefined when not set.
 */
export interface SimulatedSampling {
  temperature: number | undefined;
  rolloutId: string | number | undefined;
}

/** A task the simulated model solves only when its phrase is in the instruction. */
export interface SimulatedRule {
  /** Matched case-insensitively against the prompt's instruction text. */
  phrase: string;
  /**
   * The correct outputs for these input values (a string is sent as the raw reply). `sampling` is the
   * request's temperature and rolloutId, so a rule can answer each rollout differently (e.g. a
   * proposer giving a different instruction per `rolloutId`); the answer must depend on nothing
   * else for the model to stay deterministic.
   */
  answer: (inputs: Record<string, unknown>, sampling: SimulatedSampling) => Record<string, unknown> | string;
}

/** Options of `new SimulatedLM(options)`: rules, prompt blindness, prompt formats, temperature, model name and latency. */
export interface SimulatedLMOptions {
  /** Checked in order; the first rule whose phrase is in the instruction answers. */
  rules?: SimulatedRule[];
  /**
   * Ignore instruction and demos: every prompt is answered as if it had neither (rules never fire,
   * no nearest demo), so no prompt change can move the score.
   */
  promptBlind?: boolean;
  schemaFormat?: SchemaFormat;
  dataFormat?: DataFormat;
  /** The LM's own temperature: what a rule's `sampling.temperature` is when a call sets none. */
  temperature?: number;
  /** Model name in events and results (default "simulated"). */
  model?: string;
  /** Artificial latency per call, in milliseconds. */
  latencyMs?: number;
  /**
   * How a streamed call (`chat(request, { onDelta })`) hands out the reply: characters per chunk
   * (default 8) and milliseconds between chunks (default 0).
   */
  stream?: ChunkPacing;
}

/** What the simulated model received, and how it decided. */
export interface SimulatedRequest {
  messages: LMRequest["messages"];
  /** What it read from the messages. */
  read: ReadPrompt;
  /** `rule:<phrase>`, `demo:<index>` (0-based, the nearest demo copied) or `default`. */
  decision: string;
  /** The request's temperature in force and rolloutId (what a rule's `answer` received). */
  sampling: SimulatedSampling;
}

/** Lower-case letter/digit runs: the tokens compared between inputs and demo inputs. */
export function tokens(values: Record<string, unknown>): Set<string> {
  return new Set(JSON.stringify(Object.values(values)).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** Jaccard overlap of two token sets (0 when both are empty). */
function overlap(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}

/** The value a model with nothing to go on gives: the first enum value, "", 0, false, [], or an object of those. */
function defaultValue(shape: FieldShape): unknown {
  switch (shape.kind) {
    case "enum":
      return shape.values[0];
    case "string":
    case "unknown":
      return "";
    case "number":
      return 0;
    case "boolean":
      return false;
    case "null":
      return null;
    case "array":
      return [];
    case "object":
      return defaults(shape.fields);
  }
}

function defaults(fields: Record<string, FieldShape>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, shape] of Object.entries(fields)) out[name] = defaultValue(shape);
  return out;
}

/**
 * A deterministic, prompt-sensitive language model for tests and offline runs. It reads only the
 * text of the messages it is sent, and answers (docs/testing.md, "SimulatedLM", says the same):
 * 1. a rule whose phrase is in the instruction → that rule's answer for the input values (and the
 *    request's sampling settings, `{ temperature, rolloutId }`: the only thing besides the messages
 *    it is given, so a rule can vary its answer by rollout);
 * 2. else, with demos in the prompt → the outputs of the demo whose input tokens overlap the call's
 *    input tokens most (Jaccard; ties go to the earlier demo), missing fields filled as in 3;
 * 3. else → for each output field the first enum value (the first label), "", 0, false or [].
 * With `promptBlind`, steps 1 and 2 are skipped.
 */
export class SimulatedLM extends BaseLM {
  readonly provider = "simulated";
  readonly model: string;
  /** Every request received, in order, with what was read from it and how it was answered. */
  readonly requests: SimulatedRequest[] = [];
  private readonly rules: SimulatedRule[];
  private readonly promptBlind: boolean;
  private readonly latencyMs: number;
  private readonly pacing: ChunkPacing;

  constructor(options: SimulatedLMOptions = {}) {
    super(options);
    this.rules = options.rules ?? [];
    this.promptBlind = options.promptBlind ?? false;
    this.model = options.model ?? "simulated";
    this.latencyMs = options.latencyMs ?? 0;
    this.pacing = { chunkChars: 8, ...options.stream };
  }

  supportsStructuredOutputs(): boolean {
    return this.structuredOutputs;
  }

  /** The answer and the reason for it, without recording a request (what `complete` sends). */
  answer(
    read: ReadPrompt,
    sampling: SimulatedSampling = { temperature: this.temperature, rolloutId: undefined },
  ): { reply: Record<string, unknown> | string; decision: string } {
    const base = defaults(read.outputs);
    if (!this.promptBlind) {
      const instruction = read.instruction.toLowerCase();
      const rule = this.rules.find((r) => instruction.includes(r.phrase.toLowerCase()));
      if (rule) {
        const reply = rule.answer(read.inputs, sampling);
        return { reply: typeof reply === "string" ? reply : { ...base, ...reply }, decision: `rule:${rule.phrase}` };
      }
      if (read.demos.length > 0) {
        const mine = tokens(read.inputs);
        let best = 0;
        let bestScore = -1;
        read.demos.forEach((d, i) => {
          const s = overlap(mine, tokens(d.input));
          if (s > bestScore) [best, bestScore] = [i, s];
        });
        return { reply: { ...base, ...read.demos[best]!.output }, decision: `demo:${best}` };
      }
    }
    return { reply: base, decision: "default" };
  }

  /** Reads the messages, answers by rule, nearest demo or default, records the request with its decision, and estimates usage at four characters a token. */
  protected async complete(request: LMRequest, options: ChatOptions = {}): Promise<LMResponse> {
    const read = readPrompt(request.messages);
    const sampling: SimulatedSampling = { temperature: request.temperature ?? this.temperature, rolloutId: request.rolloutId };
    const { reply, decision } = this.answer(read, sampling);
    this.requests.push({ messages: request.messages, read, decision, sampling });
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    const content = typeof reply === "string" ? reply : writeReply(reply, request.responseSchema !== undefined, this.dataFormat);
    if (options.onDelta !== undefined) await replayText(content, options.onDelta, this.pacing, options.signal);
    return estimatedResponse(request.messages, content, this.provider, this.model);
  }
}
