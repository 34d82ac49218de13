/**
 * What the agents need from a tool, and how they present tools and their results to a model.
 *
 * The agents depend on this structural interface rather than on the `Tool` class so that anything
 * with the same face (a `Tool`, a `tool({...})`, a toolset's tools, a hand-written test double) works.
 */
import { ValidationError, preview } from "../errors.js";
import type { ToolOutcome } from "../tools/tool.js";

/** The part of `Tool` the agents use. */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the tool's arguments. */
  jsonSchema(): Record<string, unknown>;
  /** Validates `rawArgs` (as the model wrote them) and runs the tool; failures come back as `{ ok: false }`. */
  invoke(rawArgs: unknown): Promise<ToolOutcome>;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Checks the tool list given to an agent: every entry has a usable name and `invoke`, names are
 * unique and none is one of `reserved` (e.g. ReAct's "finish"). Returns the tools keyed by name.
 */
export function toolMap(agent: string, tools: readonly AgentTool[] | undefined, reserved: readonly string[] = [], identifiers = false): Map<string, AgentTool> {
  if (tools !== undefined && !Array.isArray(tools)) {
    throw new ValidationError(`${agent} option tools: expected an array of tools (e.g. [new CalculatorTool()]), received ${preview(tools)}`, {
      field: "tools",
    });
  }
  const byName = new Map<string, AgentTool>();
  (tools ?? []).forEach((t, i) => {
    const name = (t as Partial<AgentTool> | null)?.name;
    if (typeof name !== "string" || name === "" || typeof (t as Partial<AgentTool>).invoke !== "function") {
      throw new ValidationError(`${agent} option tools[${i}]: expected a Tool with a name and invoke(), received ${preview(t)}`, {
        field: `tools[${i}]`,
      });
    }
    if (reserved.includes(name)) {
      throw new ValidationError(`${agent} option tools[${i}]: the name "${name}" is reserved by ${agent}; rename the tool`, {
        field: `tools[${i}]`,
      });
    }
    if (identifiers && !IDENTIFIER.test(name)) {
      throw new ValidationError(
        `${agent} option tools[${i}]: "${name}" is exposed to code as a function, so it must be a JavaScript identifier (e.g. "${name.replace(/\W/g, "_")}")`,
        { field: `tools[${i}]` },
      );
    }
    if (byName.has(name)) {
      throw new ValidationError(`${agent} option tools: two tools are named "${name}"; tool names must be unique`, {
        field: `tools[${i}]`,
      });
    }
    byName.set(name, t);
  });
  return byName;
}

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
