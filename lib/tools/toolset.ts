/**
 * A toolset groups related tools on one class: `static tools` maps each tool's name to its
 * description, input shape and `call`, and `toTools()` turns them into `Tool` objects for an agent.
 */
import type { z } from "zod";
import type { Tool, ToolArgs } from "./tool.js";
import { toolsetTools } from "./tool-checks.js";

/** One entry of `static tools`; the key is the tool's name. */
export interface ToolsetEntry<Shape extends z.ZodRawShape = z.ZodRawShape> {
  description: string;
  input: Shape;
  /** Does the work with the validated arguments; may throw. */
  call: (args: ToolArgs<Shape>) => Promise<unknown> | unknown;
}

/** Types one entry of `static tools` from its shape (TypeScript cannot infer it inside a record). */
export function toolEntry<Shape extends z.ZodRawShape>(entry: ToolsetEntry<Shape>): ToolsetEntry<Shape> {
  return entry;
}

/**
 * What `static tools` holds. `call`'s argument is `any` so a subclass may annotate it with its own
 * type (`call: async ({ path }: { path: string }) => …`): with the shape's own type there, the
 * subclass's static side would not match the base's (TS2417) under `strictFunctionTypes`.
 * `toolEntry` types an entry's `call` from its `input` instead.
 */
export type ToolsetEntries = Record<string, { description: string; input: z.ZodRawShape; call: (args: any) => Promise<unknown> | unknown }>;

/** A group of related tools on one class: subclasses declare `static tools`, and `toTools()` turns them into `Tool` objects for an agent. */
export class Toolset {
  /** A label for the group (for logs and traces); tool names are the keys of `tools`. */
  static toolsetName = "toolset";
  static tools: ToolsetEntries = {};

  /** The toolset's tools, named by their keys in `tools`. */
  static toTools(_options?: Record<string, unknown>): Tool[] {
    return toolsetTools(this.toolsetName, this.tools);
  }
}
