import { LM } from "../../lm/lm.js";
import { OLLAMA_DEFAULT_HOST } from "../../lm/providers/info.js";
import type { LanguageModel } from "../../lm/types.js";
import { SimulatedLM } from "../../testing/simulated-lm.js";

/** Where the model of a reproduction came from, in the order they are tried. */
export type ModelSource = "--lm" | "TYPELM_LM" | "ollama" | "stand-in";

export interface ModelChoice {
  lm: LanguageModel;
  /** `provider/model`, e.g. "openai/gpt-4o-mini" or "simulated/stand-in". */
  id: string;
  source: ModelSource;
  /** True for the offline stand-in, which is not a language model. */
  standIn: boolean;
  /** One sentence for the report's first line. */
  description: string;
}

export interface ModelChoiceOptions {
  /** The `--lm` flag. */
  lm?: string | undefined;
  /** The environment's TYPELM_LM and OLLAMA_HOST (the caller reads the environment; this does not). */
  env: Readonly<Record<string, string | undefined>>;
  /** The response cache file, or undefined for no cache. */
  cachePath?: string | undefined;
  /** How long to wait for a local Ollama to answer (ms). */
  ollamaProbeMs?: number;
}

/** The stand-in's own description: it is said on the report's first line. */
const STAND_IN_NOTE =
  "the offline stand-in (SimulatedLM: copies the outputs of the demo in the prompt nearest to the input, else the first label; it is not a language model)";

/**
 * The model for a reproduction: `--lm`, else `TYPELM_LM`, else a local Ollama that answers (its
 * first listed model), else the offline stand-in.
 */
export async function chooseModel(options: ModelChoiceOptions): Promise<ModelChoice> {
  const env = options.env;
  const cache = options.cachePath === undefined ? undefined : { path: options.cachePath };
  const make = (id: string, source: ModelSource): ModelChoice => ({
    lm: new LM(id, { temperature: 0, ...(cache ? { cache } : {}) }), id, source, standIn: false,
    description: `${id} (from ${source === "ollama" ? "the local Ollama server" : source}, temperature 0)`,
  });
  // The stand-in's own id (results.json records it) chooses it by name, even with an Ollama running.
  const named = (id: string, source: ModelSource): ModelChoice => (id === STAND_IN_ID ? { ...standIn(), source } : make(id, source));
  if (options.lm !== undefined) return named(options.lm, "--lm");
  const fromEnv = env["TYPELM_LM"];
  if (fromEnv !== undefined && fromEnv !== "") return named(fromEnv, "TYPELM_LM");
  const local = await firstOllamaModel(env["OLLAMA_HOST"] || OLLAMA_DEFAULT_HOST, options.ollamaProbeMs ?? 500);
  if (local !== undefined) return make(`ollama/${local}`, "ollama");
  return standIn();
}

/** The offline stand-in's model id, as results.json records it. */
const STAND_IN_ID = "simulated/stand-in";

function standIn(): ModelChoice {
  return { lm: new SimulatedLM({ model: "stand-in" }), id: STAND_IN_ID, source: "stand-in", standIn: true, description: STAND_IN_NOTE };
}

/** The first model a local Ollama lists, or undefined when none answers in time. */
export async function firstOllamaModel(host: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(new URL("/api/tags", host), { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { models?: { name?: unknown }[] };
    const name = body.models?.[0]?.name;
    return typeof name === "string" && name !== "" ? name : undefined;
  } catch {
    return undefined; // not running, not reachable, or not Ollama: fall through to the stand-in
  }
}
