/**
 * How the agents present tools and their results to a model, and how they run a tool: loaded with an
 * agent's run module at its first call (the tool list itself is checked in agent-options.ts).
 */
import { preview } from "../errors.js";
import type { ToolOutcome } from "../tools/tool.js";
import type { AgentTool } from "./agent-options.js";

export type { AgentTool } from "./agent-options.js";

/**
 * A tool's argument schema as one line of JSON, without `$schema`. A tool whose schema cannot be
 * rendered is still callable, so it shows as `{}`: the model just sees less.
 */
export function schemaText(t: AgentTool): string {
  try {
    const { $schema: _drop, ...rest } = t.jsonSchema();
    return JSON.stringify(rest);
  } catch {
    return "{}";
  }
}

/** One line per tool with its argument schema, the text the model chooses actions from. */
export function describeTools(tools: Iterable<AgentTool>): string {
  return [...tools].map((t) => `- ${t.name}: ${t.description} Arguments (JSON Schema): ${schemaText(t)}`).join("\n");
}

/** Runs a tool without letting it break the agent: a throw (against the contract) becomes an error outcome. */
export async function invokeSafely(t: AgentTool, args: unknown): Promise<ToolOutcome> {
  try {
    return await t.invoke(args);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : preview(error) };
  }
}

/** A value as the model should read it: strings as they are, anything else as JSON. */
export function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "undefined";
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Cuts long text for the prompt, saying how much was dropped (the full value stays in the history). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters cut]`;
}
