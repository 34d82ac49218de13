import { ValidationError, preview } from "../errors.js";

/** A host function exposed to guest code; the guest calls it with one argument and awaits the result. */
export type SandboxTool = (args: unknown) => Promise<unknown> | unknown;

/** Options of `Sandbox.create`: the time, memory, stack, output and tool-call limits of a run, and the tools installed as guest globals. */
export interface SandboxOptions {
  /** Wall-clock limit of one `run`, including time spent waiting for tools. Default 1000 ms. */
  timeoutMs?: number;
  /** Guest heap limit. Default 32 MiB. */
  memoryLimitBytes?: number;
  /**
   * Guest call-stack limit. Default and maximum 256 KiB: above that, deep recursion overflows the
   * host's V8 stack before QuickJS notices, and the WASM module aborts.
   */
  maxStackBytes?: number;
  /** Captured console text is cut after this many characters, with a marker. Default 20 000. */
  maxOutputChars?: number;
  /** Host functions installed as guest globals under their keys. */
  tools?: Record<string, SandboxTool>;
  /**
   * Tool calls allowed in one `run`. Default 1000. A call past the cap fails, and the run ends with
   * "tool call limit of N calls per run exceeded", so a guest loop cannot queue unbounded host calls.
   */
  maxToolCalls?: number;
}

export type ResolvedSandboxOptions = Required<SandboxOptions>;

const MAX_STACK_BYTES = 256 * 1024;
const DEFAULT_MAX_TOOL_CALLS = 1000;
const MIN_STACK_BYTES = 16 * 1024;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Globals a tool must not replace: the sandbox relies on them, or guest code cannot work without them. */
const RESERVED = new Set(["console", "globalThis", "Promise", "JSON", "Object", "Function", "Error", "eval", "undefined"]);

function positiveInteger(field: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(
      `Sandbox option ${field}: expected an integer between ${min} and ${max}, received ${preview(value)}`,
      { field },
    );
  }
  return value;
}

/** Applies defaults and rejects limits that would make the sandbox unsafe or useless. */
export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  const tools = options.tools ?? {};
  for (const [name, fn] of Object.entries(tools)) {
    if (!IDENTIFIER.test(name) || RESERVED.has(name)) {
      throw new ValidationError(
        `Sandbox tool name ${preview(name)}: expected a JavaScript identifier that is not one of ${[...RESERVED].join(", ")}`,
        { field: `tools.${name}` },
      );
    }
    if (typeof fn !== "function") {
      throw new ValidationError(`Sandbox tool ${name}: expected a function, received ${typeof fn}`, {
        field: `tools.${name}`,
      });
    }
  }
  return {
    timeoutMs: positiveInteger("timeoutMs", options.timeoutMs ?? 1000, 1),
    memoryLimitBytes: positiveInteger("memoryLimitBytes", options.memoryLimitBytes ?? 32 * 1024 * 1024, 1024 * 1024),
    maxStackBytes: positiveInteger("maxStackBytes", options.maxStackBytes ?? MAX_STACK_BYTES, MIN_STACK_BYTES, MAX_STACK_BYTES),
    maxOutputChars: positiveInteger("maxOutputChars", options.maxOutputChars ?? 20_000, 0),
    maxToolCalls: positiveInteger("maxToolCalls", options.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS, 1),
    tools,
  };
}
