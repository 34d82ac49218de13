// Type-level tests of Toolset: compiled by `tsc --noEmit` (strict), never executed.
// Each `@ts-expect-error` line must fail to compile, or tsc reports an unused directive.
import { z } from "zod";
import { Toolset, toolEntry, type Tool } from "../../lib/index.js";

// API.md's example, with `call`'s argument annotated as strict mode needs (a static initializer is
// not typed from the base class, so an unannotated `({ path })` would be an implicit any).
export class Files extends Toolset {
  static override toolsetName = "files";
  static override tools = {
    read_file: { description: "Reads a file", input: { path: z.string() }, call: async ({ path }: { path: string }) => `contents of ${path}` },
  };
}
export const tools: Tool[] = Files.toTools();

// The argument may also be an interface (no index signature) or several fields with defaults.
interface Range { path: string; from: number }
export class Ranges extends Toolset {
  static override tools = {
    read_range: { description: "Reads lines", input: { path: z.string(), from: z.number().default(0) }, call: ({ path, from }: Range) => `${path}:${from}` },
  };
}

// `toolEntry` types `call` from the shape, with no annotation.
export class Typed extends Toolset {
  static override tools = {
    read_file: toolEntry({ description: "Reads a file", input: { path: z.string() }, call: async ({ path }) => path.toUpperCase() }),
    // @ts-expect-error path is a string, not a number
    bad: toolEntry({ description: "Wrong", input: { path: z.string() }, call: async ({ path }) => path.toFixed(1) }),
  };
}

// An entry must still have a description and an input shape.
// @ts-expect-error no input shape (TS2417 on the class)
export class Broken extends Toolset {
  static override tools = { nothing: { description: "No input", call: async () => 1 } };
}
