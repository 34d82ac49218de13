/**
 * The work behind `Tool.invoke`, loaded at the first invocation (not at `import "typelm"`): parses and
 * validates the model's arguments against the tool's input shape (dates revived, defaults applied),
 * calls the tool, and turns every failure into the error outcome the agent reads; `invokeTool` also
 * times the call and emits its `tool.call` event.
 */
import { z } from "zod";
import { ValidationError, preview } from "../errors.js";
import { keepProtoKeys, reviveFields } from "../convert/input.js";
import { isPlainObject } from "../plain-object.js";
import type { Shape as FieldShape } from "../signature/signature.js";
import { Instrumentation } from "../instrument/bus.js";
import type { Tool, ToolArgs, ToolOutcome } from "./tool.js";

// The object schema of each input shape, built once (not at every invocation).
const objectSchemas = new WeakMap<z.ZodRawShape, z.ZodObject<z.ZodRawShape>>();

function objectSchema<Shape extends z.ZodRawShape>(shape: Shape): z.ZodObject<Shape> {
  let schema = objectSchemas.get(shape);
  if (schema === undefined) objectSchemas.set(shape, (schema = z.object(shape)));
  return schema as z.ZodObject<Shape>;
}

/** Validates `rawArgs` (an object, or a JSON string of one) for `tool`, then calls it. Never rejects for a bad call or a failing tool. */
export async function attempt<Shape extends z.ZodRawShape>(tool: Tool<Shape>, rawArgs: unknown): Promise<ToolOutcome> {
  let candidate: unknown = rawArgs ?? {};
  if (typeof candidate === "string") {
    try {
      candidate = JSON.parse(candidate) as unknown;
    } catch {
      return { ok: false, error: `Invalid arguments for tool "${tool.name}": expected a JSON object, received ${preview(rawArgs)}` };
    }
  }
  if (isPlainObject(candidate)) {
    // ISO strings become the declared date values, exactly as for a signature's inputs.
    try {
      candidate = reviveFields(tool.input as unknown as FieldShape, candidate, `tool "${tool.name}"`);
    } catch (error) {
      return invalidArguments(tool, error);
    }
  }
  const schema = objectSchema(tool.input);
  const parsed = schema.safeParse(candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const path = issue.path.map(String).join(".");
      return `${path || "(arguments)"}: ${issue.message}`;
    });
    return { ok: false, error: `Invalid arguments for tool "${tool.name}": ${problems.join("; ")}` };
  }
  let args: unknown;
  try {
    args = keepProtoKeys(schema, candidate, parsed.data, "", `tool "${tool.name}"`);
  } catch (error) {
    return invalidArguments(tool, error);
  }
  try {
    return { ok: true, value: await tool.call(args as ToolArgs<Shape>) };
  } catch (error) {
    const message = error instanceof Error ? error.message : preview(error);
    return { ok: false, error: `Tool "${tool.name}" failed: ${message}` };
  }
}

/** A ValidationError about the arguments as the agent's error observation; anything else is rethrown. */
function invalidArguments(tool: Tool, error: unknown): ToolOutcome {
  if (!(error instanceof ValidationError)) throw error;
  return { ok: false, error: `Invalid arguments for tool "${tool.name}": ${error.message}` };
}

/** The rest of `Tool.invoke` once `tool.call.start` is emitted: `attempt`, timed, then the `tool.call` event (with `ok`, `durationMs` and any error). */
export async function invokeTool<Shape extends z.ZodRawShape>(tool: Tool<Shape>, rawArgs: unknown): Promise<ToolOutcome> {
  const started = performance.now();
  const outcome = await attempt(tool, rawArgs);
  const payload: Record<string, unknown> = {
    tool: tool.name,
    args: rawArgs,
    ok: outcome.ok,
    durationMs: performance.now() - started,
  };
  if (!outcome.ok) payload.error = outcome.error;
  Instrumentation.emit("tool.call", payload);
  return outcome;
}
