// The check of a tool's definition when `tool({ ... })` makes it (lib/tools/tool.ts). The bundle loads
// this module at the first call (scripts/deferred-modules.mjs).
import { z } from "zod";
import { ValidationError, preview } from "../errors.js";

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
