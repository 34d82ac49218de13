import type { SignatureClass } from "../signature/signature.js";
import type { LanguageModel, LMResponse } from "../lm/types.js";
import { extractJson } from "./extract-json.js";

/**
 * How a predictor gets JSON out of a model: whether to ask for native structured output, and how to
 * pull the JSON value out of the reply. Extend it to plug in your own extraction.
 */
export abstract class StrategyInterface {
  /** A short name for logs and records. */
  get name(): string {
    return this.constructor.name;
  }

  /** Whether to request the provider's native structured output for this model. */
  useStructuredOutputs(lm: LanguageModel): boolean {
    return lm.structuredOutputs && lm.supportsStructuredOutputs();
  }

  /** Returns the JSON value held in the reply (throw `OutputError` when there is none). */
  abstract extractJson(signature: SignatureClass, lmResponse: LMResponse): unknown;
}

/** Provider-optimized: native structured output where the provider and model support it, else Enhanced Prompting. */
export class StrictStrategy extends StrategyInterface {
  override get name(): string {
    return "strict";
  }
  extractJson(_signature: SignatureClass, lmResponse: LMResponse): unknown {
    return extractJson(lmResponse.content);
  }
}

/** Enhanced Prompting with tolerant JSON extraction: works with every model. */
export class CompatibleStrategy extends StrategyInterface {
  override get name(): string {
    return "compatible";
  }
  override useStructuredOutputs(): boolean {
    return false;
  }
  extractJson(_signature: SignatureClass, lmResponse: LMResponse): unknown {
    return extractJson(lmResponse.content);
  }
}

/** The built-in strategies: `Strategy.Strict` (native structured output where the provider supports it and the LM asks for it, else Enhanced Prompting) and `Strategy.Compatible` (always Enhanced Prompting). */
export const Strategy = {
  Strict: new StrictStrategy() as StrategyInterface,
  Compatible: new CompatibleStrategy() as StrategyInterface,
} as const;
