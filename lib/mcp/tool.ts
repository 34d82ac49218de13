/**
 * One MCP server tool as a typelm `Tool`: its name and description as the server gives them, a zod
 * input built from its JSON Schema, and `call`, which asks the server and returns the result's text.
 * A protocol error, a timeout or an `isError` result throws, so `invoke` gives the agent an error
 * observation and the run goes on. The call and the result's text are in result.ts, loaded at the first call.
 */
import { z } from "zod";
import { Tool } from "../tools/tool.js";
import type { MCPToolResult } from "./result.js";
import { inputSchemaToZod } from "./schema-to-zod.js";

/** What a tool needs of the connection: a call with a timeout in milliseconds. */
export interface MCPCaller {
  /** Calls tool `name` on the server with `args`; rejects when there is no answer within `timeoutMs`. */
  callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<MCPToolResult>;
}

/** A tool as `tools/list` describes it (the fields read here). */
export interface MCPToolDescription {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}

/** A tool served by an MCP server, callable by typelm agents. Made by `MCPClient.tools()`. */
export class MCPTool extends Tool<z.ZodRawShape> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodRawShape;
  /** The parts of the server's input schema that were not translated (accepted as any value; the server checks them). */
  readonly notes: readonly string[];

  /** Made by `MCPClient.tools()` from the server's description of the tool. */
  constructor(
    description: MCPToolDescription,
    private readonly caller: MCPCaller,
    private readonly timeoutMs: number,
  ) {
    super();
    const { shape, notes } = inputSchemaToZod(description.inputSchema);
    this.name = description.name;
    this.description = description.description ?? description.title ?? "";
    this.input = shape;
    this.notes = notes;
  }

  /** Calls the tool on the server; the result's text is the observation. Throws on a server error or an `isError` result. */
  async call(args: Record<string, unknown>): Promise<string> {
    const { callMCPTool } = await import("./result.js");
    return callMCPTool(this.caller, this.name, args, this.timeoutMs);
  }
}
