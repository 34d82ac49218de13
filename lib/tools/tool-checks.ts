// The check of a tool's definition when `tool({ ... })` makes it (lib/tools/tool.ts), a tool's parameter
// schema (`Tool.jsonSchema`) and a toolset's tools (`Toolset.toTools`). The bundle loads this module at
// the first call (scripts/deferred-modules.mjs).
import { z } from "zod";
import { ValidationError, preview } from "../errors.js";
import { shapeToJsonSchema } from "../signature/json-schema.js";
import type { Shape as FieldShape } from "../signature/signature.js";
import { type Tool, type ToolParameterSchema, tool } from "./tool.js";
import type { ToolsetEntries } from "./toolset.js";

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks a definition up front, so a typo fails when the tool is made rather than mid-run. */
export function validateToolDefinition(definition: { name: unknown; description: unknown; input: unknown; call: unknown }): void {
  const { name } = definition;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new ValidationError(`Tool name: expected 1-64 letters, digits, "_" or "-", received ${preview(name)}`, { field: "name" });
  }
  if (typeof definition.description !== "string") {
    throw new ValidationError(`Tool "${name}" description: expected a string, received ${preview(definition.description)}`, {
      field: "description",
    });
  }
  const input = definition.input;
  if (input === null || typeof input !== "object" || Object.values(input).some((field) => !(field instanceof z.ZodType))) {
    throw new ValidationError(`Tool "${name}" input: expected a zod shape (an object of zod types), received ${preview(input)}`, {
      field: "input",
    });
  }
  if (typeof definition.call !== "function") {
    throw new ValidationError(`Tool "${name}" call: expected a function, received ${typeof definition.call}`, { field: "call" });
  }
}

/** `Tool.jsonSchema()`: the parameter schema of an input shape, `{ type: "object", properties, required }`. */
export function toolParameterSchema(input: z.ZodRawShape): ToolParameterSchema {
  // The signatures' schema builder: same date formats, same handling of defaults and integers.
  const { $schema: _drop, ...schema } = shapeToJsonSchema(input as unknown as FieldShape);
  return { ...schema, type: "object", properties: schema.properties as Record<string, unknown>, required: schema.required as string[] };
}

/** `Toolset.toTools()`: a tool for each entry of a toolset's `static tools`, named by its key; none is an error. */
export function toolsetTools(toolsetName: string, tools: ToolsetEntries): Tool[] {
  const entries = Object.entries(tools);
  if (entries.length === 0) {
    throw new ValidationError(`Toolset ${toolsetName}: static tools is empty; declare at least one tool`, {
      field: "tools",
    });
  }
  return entries.map(([name, entry]) => tool({ name, description: entry.description, input: entry.input, call: entry.call }));
}
