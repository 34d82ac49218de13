/**
 * The option checks the agents' constructors share (ReAct, CodeAct, ProgramOfThought): positive
 * integers, the tool list, the `toolCalling` mode. Loaded with `import "typelm"`, since constructors
 * run synchronously; everything an agent does at run time is in its lazily loaded run module.
 */
import { ValidationError, preview } from "../errors.js";
import type { ToolOutcome } from "../tools/tool.js";
import type { ToolCalling } from "./react.js";

/**
 * The part of `Tool` the agents use.
 *
 * The agents depend on this structural interface rather than on the `Tool` class so that anything
 * with the same face (a `Tool`, a `tool({...})`, a toolset's tools, a hand-written test double) works.
 */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the tool's arguments. */
  jsonSchema(): Record<string, unknown>;
  /** Validates `rawArgs` (as the model wrote them) and runs the tool; failures come back as `{ ok: false }`. */
  invoke(rawArgs: unknown): Promise<ToolOutcome>;
}

/** A positive integer option, or a ValidationError naming it. */
export function positiveInt(agent: string, field: string, value: unknown, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    throw new ValidationError(`${agent} option ${field}: expected an integer >= ${min}, received ${preview(value)}`, { field });
  }
  return v;
}

/** The `toolCalling` option checked: "auto" when omitted. */
export function toolCallingOption(agent: string, value: unknown): ToolCalling {
  if (value === undefined) return "auto";
  if (value === "native" || value === "text" || value === "auto") return value;
  throw new ValidationError(`${agent} option toolCalling: expected "native", "text" or "auto", received ${preview(value)}`, { field: "toolCalling" });
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
