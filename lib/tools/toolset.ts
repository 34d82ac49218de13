/**
 * A toolset groups related tools on one class: `static tools` maps each tool's name to its
 * description, input shape and `call`, and `toTools()` turns them into `Tool` objects for an agent.
 */
import type { z } from "zod";
import { ValidationError } from "../errors.js";
import { type Tool, type ToolArgs, tool } from "./tool.js";

/** One entry of `static tools`; the key is the tool's name. */
export interface ToolsetEntry<Shape extends z.ZodRawShape = z.ZodRawShape> {
  description: string;
  input: Shape;
  call: (args: ToolArgs<Shape>) => Promise<unknown> | unknown;
}

/** Types one entry of `static tools` from its shape (TypeScript cannot infer it inside a record). */
export function toolEntry<Shape extends z.ZodRawShape>(entry: ToolsetEntry<Shape>): ToolsetEntry<Shape> {
  return entry;
}

export class Toolset {
  /** A label for the group (for logs and traces); tool names are the keys of `tools`. */
  static toolsetName = "toolset";
  // `any` here lets each entry keep its own shape; `toolEntry` recovers the types where wanted.
  static tools: Record<string, ToolsetEntry<any>> = {};

  /** The toolset's tools, named by their keys in `tools`. */
  static toTools(_options?: Record<string, unknown>): Tool[] {
    const entries = Object.entries(this.tools);
    if (entries.length === 0) {
      throw new ValidationError(`Toolset ${this.toolsetName}: static tools is empty; declare at least one tool`, {
        field: "tools",
      });
    }
    return entries.map(([name, entry]) => tool({ name, description: entry.description, input: entry.input, call: entry.call }));
  }
}
