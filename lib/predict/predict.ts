import { currentSampling, resolveLM, resolveStrategy } from "../config.js";
import { convertOutputs } from "../convert/output.js";
import { validateInputs } from "../convert/input.js";
import { describeError, Instrumentation, inSpan } from "../instrument/bus.js";
import type { LanguageModel, LMResponse } from "../lm/types.js";
import type { StrategyInterface } from "../strategy/strategy.js";
import { Module, withCallSampling, type CallOptions, type StreamOptions, type Tunable } from "../module.js";
import { Prompt } from "../prompt/prompt.js";
import { parseToonReply } from "../prompt/toon-data.js";
import { compiled, type CompiledSignature } from "../signature/compile.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { Prediction, type Typed } from "./prediction.js";
import { recordTrace } from "./trace.js";
import { replyTap } from "../stream/reply-tap.js";
import { recognizeOneCall } from "../stream/context.js";
import type { PredictionStream } from "../stream/events.js";

/** Options of `new Predict(signature, options)`: the instruction (default: the signature's description) and the demos. */
export interface PredictOptions {
  /** The task instruction; the signature's description by default. */
  instruction?: string;
  demos?: FewShotExample[];
}

interface PromptCacheEntry {
  instruction: string;
  /** The examples the prompt was built from, copied: in-place changes of `demos` show up as a difference. */
  demos: readonly FewShotExample[];
  schemaFormat: string;
  dataFormat: string;
  prompt: Prompt;
}

// Kept outside the instance so `clone()` (which copies enumerable fields) starts with a clean cache.
const promptCaches = new WeakMap<object, PromptCacheEntry[]>();

/**
 * Whether `current` holds the same examples in the same order as the cached copy. Comparing the
 * elements (not the array's identity and length) catches `demos[0] = x`, `reverse()`, `splice()`:
 * optimizers change demos in place. A few pointer comparisons per call.
 */
export function sameDemos(cached: readonly FewShotExample[], current: readonly FewShotExample[]): boolean {
  if (cached.length !== current.length) return false;
  for (let i = 0; i < cached.length; i++) if (cached[i] !== current[i]) return false;
  return true;
}

/** Calls the model once with the signature's prompt and returns the typed prediction. */
export class Predict<I extends Shape = Shape, O extends Shape = Shape>
  extends Module<InputOf<I>, Typed<OutputOf<O>>>
  implements Tunable
{
  readonly isPredictor = true as const;
  readonly signature: SignatureClass<I, O>;
  instruction: string;
  demos: FewShotExample[];

  constructor(signature: SignatureClass<I, O>, options: PredictOptions = {}) {
    super();
    const sig = compiled(signature); // validates the signature now rather than at the first call
    this.signature = signature;
    this.instruction = options.instruction ?? sig.description;
    this.demos = options.demos ?? [];
  }

  /** The compiled signature (cached per class). */
  get compiledSignature(): CompiledSignature {
    return compiled(this.signature);
  }

  /** The prompt this predictor sends with the given formats (rebuilt only when instruction or demos change). */
  prompt(schemaFormat: LanguageModel["schemaFormat"] = "json", dataFormat: LanguageModel["dataFormat"] = "json"): Prompt {
    let entries = promptCaches.get(this);
    if (entries === undefined) promptCaches.set(this, (entries = []));
    for (const e of entries) {
      if (
        e.schemaFormat === schemaFormat && e.dataFormat === dataFormat && e.instruction === this.instruction &&
        sameDemos(e.demos, this.demos)
      ) return e.prompt;
    }
    const demos = Object.freeze([...this.demos]);
    const prompt = new Prompt(this.compiledSignature, { schemaFormat, dataFormat, instruction: this.instruction, demos });
    if (entries.length >= 4) entries.shift();
    entries.push({ instruction: this.instruction, demos, schemaFormat, dataFormat, prompt });
    return prompt;
  }

  /** Like `call`, streaming the reply's fields as they arrive (see `Module.stream`). */
  override stream(inputs: InputOf<I>, options: StreamOptions = {}): PredictionStream<Typed<OutputOf<O>>, OutputOf<O>> {
    return super.stream(inputs, options) as PredictionStream<Typed<OutputOf<O>>, OutputOf<O>>;
  }

  /** Validates the inputs, resolves the LM, makes one model call and converts the reply into the typed prediction. */
  async forward(inputs: InputOf<I>, options: CallOptions = {}): Promise<Typed<OutputOf<O>>> {
    const sig = this.compiledSignature;
    const values = validateInputs(sig, inputs);
    const lm = resolveLM(options.lm, this.config.lm);
    // `call` has already put the sampling options in scope; this covers `forward` called directly.
    return (await withCallSampling(options, () => this.predictValues(values, lm))) as Typed<OutputOf<O>>;
  }

  /** One model call on already-validated input values. Agents use it for their inner steps. */
  protected predictValues(values: Record<string, unknown>, lm: LanguageModel): Promise<Prediction> {
    return inSpan(() => this.predictInSpan(values, lm));
  }

  /**
   * The value a reply holds: its TOON (data format "toon"), else the JSON the strategy extracts. A
   * judge's predictor reads its own, last verdict here (see `Judge`).
   */
  protected replyValue(response: LMResponse, dataFormat: LanguageModel["dataFormat"], strategy: StrategyInterface): unknown {
    return dataFormat === "toon" ? parseToonReply(response.content) : strategy.extractJson(this.signature, response);
  }

  private async predictInSpan(values: Record<string, unknown>, lm: LanguageModel): Promise<Prediction> {
    const sig = this.compiledSignature;
    const strategy = resolveStrategy(this.config.strategy);
    const native = strategy.useStructuredOutputs(lm);
    const dataFormat = native ? "json" : lm.dataFormat;
    const prompt = this.prompt(lm.schemaFormat, dataFormat);
    // The `temperature` / `rolloutId` of the innermost call running (this one's, or an enclosing module's).
    const { temperature, rolloutId } = currentSampling();
    const started = performance.now();
    Instrumentation.emit("prediction.start", { predictor: this.constructor.name, signature: sig.name, model: lm.id });
    try {
      const tap = replyTap(this, sig, dataFormat);
      const response = await lm.chat({
        messages: prompt.messages(values),
        signature: this.signature,
        inputs: values,
        responseSchema: native ? { name: sig.name, schema: sig.outputJsonSchema } : undefined,
        ...(temperature === undefined ? {} : { temperature }),
        ...(rolloutId === undefined ? {} : { rolloutId }),
      }, tap?.chatOptions);
      const json = this.replyValue(response, dataFormat, strategy);
      const outputs = convertOutputs(sig, json, response.content);
      tap?.finish(outputs);
      const prediction = new Prediction(outputs, {
        raw: response.content, usage: response.usage, model: `${response.provider}/${response.model}`, cached: response.cached,
      });
      recordTrace({ predictor: this, inputs: values, prediction });
      Instrumentation.emit("prediction.end", {
        predictor: this.constructor.name, signature: sig.name, model: lm.id, ok: true, durationMs: performance.now() - started,
      });
      return prediction;
    } catch (error) {
      Instrumentation.emit("prediction.end", {
        predictor: this.constructor.name, signature: sig.name, model: lm.id, ok: false,
        durationMs: performance.now() - started, error: describeError(error),
      });
      throw error;
    }
  }
}

// A Predict whose subclass keeps Predict's own `forward` and `predictValues` makes one model call,
// reached synchronously from `call`: its stream needs no AsyncLocalStorage (see stream/context.ts).
recognizeOneCall((module) =>
  module instanceof Predict && module.forward === Predict.prototype.forward && module["predictValues"] === Predict.prototype["predictValues"]);
