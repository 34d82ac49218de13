/**
 * Turns an MCP tool result into the observation an agent reads: the text of its content blocks, one
 * per line. Images and audio are described as `[image <mime>, N bytes]` for now (media values for
 * observations are being built separately); an embedded resource gives its text or a description; a
 * result with no content but structured content gives that content's JSON. `callMCPTool` is the work
 * of `MCPTool.call`, loaded with this module at a tool's first call.
 */
import { redactString } from "../instrument/redact.js";
import type { MCPCaller } from "./tool.js";

/** The parts of an MCP `CallToolResult` this module reads. */
export interface MCPToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
}

/** Bytes in a base64 string, counted from its length and padding (the data is not decoded). */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - padding;
}

function blockText(block: Record<string, unknown>): string {
  switch (block.type) {
    case "text":
      return String(block.text ?? "");
    case "image":
    case "audio":
      return `[${block.type} ${String(block.mimeType ?? "unknown type")}, ${base64Bytes(block.data)} bytes]`;
    case "resource": {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === "string") return resource.text;
      return `[resource ${String(resource.uri ?? "")} ${String(resource.mimeType ?? "")}, ${base64Bytes(resource.blob)} bytes]`.replace(" ,", ",");
    }
    case "resource_link":
      return `[resource link ${String(block.uri ?? "")}${typeof block.name === "string" ? ` (${block.name})` : ""}]`;
    default:
      return `[${String(block.type)} content]`;
  }
}

/** The observation text of a tool result. */
export function resultText(result: MCPToolResult): string {
  const blocks = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  if (blocks.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return blocks.map(blockText).join("\n");
}

/** `MCPTool.call`: asks the server, and returns the result's text; throws on a server error or an `isError` result. */
export async function callMCPTool(caller: MCPCaller, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<string> {
  let result: MCPToolResult;
  try {
    result = await caller.callTool(name, args, timeoutMs);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(redactString(`the MCP server answered with an error: ${message}`));
  }
  const text = resultText(result);
  if (result.isError === true) throw new Error(`the MCP server reported an error: ${text || "(no message)"}`);
  return text;
}
