/**
 * A tool is an operation an agent may call: a name, a description, a zod input shape and `call`.
 * `invoke` is the agent-facing entry point: it validates the model's arguments, runs the tool and
 * turns every failure into an error message the agent can read, so a bad call never crashes a run
 * (that work, tool-run.ts, loads at the first `invoke`).
 */
import type { z } from "zod";
import { Instrumentation, inSpan } from "../instrument/bus.js";
import { moduleOnFirstUse } from "../load-sync.js";
import { toolParameterSchema, validateToolDefinition } from "./tool-checks.js";

/** What an agent gets back from `invoke`. */
export type ToolOutcome = { ok: true; value: unknown } | { ok: false; error: string };

/** Parameter schema of a tool (the signatures' JSON Schema, without `$schema`). */
export interface ToolParameterSchema {
  type: "object";
  properties: Record<string, unknown>;
  required: string[];
  [key: string]: unknown;
}

/** The arguments a tool's `call` receives: the shape's output type, defaults applied. */
export type ToolArgs<Shape extends z.ZodRawShape> = z.output<z.ZodObject<Shape>>;

/** tool-run.ts, loaded by the first `invoke`. */
const toolRun = moduleOnFirstUse(() => import("./tool-run.js"));

/** Names a provider accepts for a function tool (OpenAI and Anthropic agree on this). */
/** A tool an agent can call: a name, a description, an input shape of signature field types, and `call`. `invoke` validates a model's arguments and turns every failure into an error outcome. */
export abstract class Tool<Shape extends z.ZodRawShape = z.ZodRawShape> {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract readonly input: Shape;

  /** Does the work with validated arguments. May throw; `invoke` reports the error. */
  abstract call(args: ToolArgs<Shape>): Promise<unknown> | unknown;

  /** The parameter schema to show a model: `{ type: "object", properties, required }`. */
  jsonSchema(): ToolParameterSchema {
    return toolParameterSchema(this.input);
  }

  /**
   * Validates `rawArgs` (an object, or a JSON string of one), applies defaults, calls the tool and
   * emits `tool.call.start` and `tool.call` (the end, with `ok` and `durationMs`) in a span of its own. Never throws.
   */
  invoke(rawArgs: unknown): Promise<ToolOutcome> {
    return inSpan(() => this.invokeInSpan(rawArgs));
  }

  private async invokeInSpan(rawArgs: unknown): Promise<ToolOutcome> {
    Instrumentation.emit("tool.call.start", { tool: this.name, args: rawArgs });
    const { invokeTool } = toolRun.loaded ?? (await toolRun.load());
    return invokeTool(this, rawArgs);
  }
}

/** Everything needed to define a tool without a class. */
export interface ToolDefinition<Shape extends z.ZodRawShape> {
  name: string;
  description: string;
  input: Shape;
  /** Does the work with the validated arguments (dates already converted, defaults applied); may throw. */
  call: (args: ToolArgs<Shape>) => Promise<unknown> | unknown;
}

class FunctionTool<Shape extends z.ZodRawShape> extends Tool<Shape> {
  readonly name: string;
  readonly description: string;
  readonly input: Shape;
  private readonly fn: ToolDefinition<Shape>["call"];

  constructor(definition: ToolDefinition<Shape>) {
    super();
    validateToolDefinition(definition);
    this.name = definition.name;
    this.description = definition.description;
    this.input = definition.input;
    this.fn = definition.call;
  }

  call(args: ToolArgs<Shape>): Promise<unknown> | unknown {
    return this.fn(args);
  }
}

/** Makes a tool from a plain definition; `call`'s argument type is inferred from `input`. */
export function tool<Shape extends z.ZodRawShape>(definition: ToolDefinition<Shape>): Tool<Shape> {
  return new FunctionTool(definition);
}
