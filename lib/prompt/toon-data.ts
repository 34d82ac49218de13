import { decode, encode } from "@toon-format/toon";
import type { z } from "zod";
import { ToonDecodeError } from "../errors.js";
import type { Shape } from "../signature/signature.js";
import { unwrap } from "../signature/fields.js";
import { temporalKind } from "../signature/temporal.js";

/** Values in TOON, inside a ```toon fence. */
export function toonFence(values: Record<string, unknown>): string {
  return "```toon\n" + encode(values) + "\n```";
}

const TOON_FENCE = /```[ \t]*toon[ \t]*\r?\n([\s\S]*?)```/i;

/** Decodes a TOON reply (fenced or bare). Malformed TOON raises `ToonDecodeError` with the raw reply. */
export function parseToonReply(raw: string): unknown {
  const match = TOON_FENCE.exec(raw);
  const body = (match ? match[1]! : raw).replace(/\s+$/, "");
  try {
    return decode(body);
  } catch (error) {
    const err = error as { message?: string; line?: number };
    throw new ToonDecodeError(`Model reply is not valid TOON: ${err.message ?? String(error)}`, {
      raw, line: err.line, received: body.length > 200 ? `${body.slice(0, 200)}…` : body, cause: error,
    });
  }
}

/** A placeholder for one value of `schema`, for the output template (`<positive|negative>`, `<number>`). */
function placeholder(schema: z.ZodType): string {
  const { base, optional, nullable } = unwrap(schema);
  const def = base._zod.def as { type: string; entries?: Record<string, unknown>; values?: unknown[]; checks?: { _zod: { def: { format?: string } } }[] };
  let text: string;
  const kind = temporalKind(base);
  if (kind === "date") text = "YYYY-MM-DD";
  else if (kind === "datetime") text = "YYYY-MM-DDTHH:MM:SS+00:00";
  else if (def.type === "enum") text = Object.values(def.entries ?? {}).join("|");
  else if (def.type === "literal") text = (def.values ?? []).map(String).join("|");
  else if (def.type === "number") text = def.checks?.some((c) => c._zod.def.format?.includes("int")) ? "integer" : "number";
  else if (def.type === "date") text = "ISO 8601 instant";
  else text = def.type;
  return `<${text}${optional || nullable ? " or null" : ""}>`;
}

/**
 * The output template shown to the model in data format TOON: each field with a placeholder,
 * arrays of objects in TOON's tabular form.
 */
export function toonTemplate(shape: Shape, indent = ""): string {
  const lines: string[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const { base } = unwrap(schema);
    const def = base._zod.def as { type: string; shape?: Shape; element?: z.ZodType };
    if (def.type === "object" && def.shape) {
      lines.push(`${indent}${name}:`, toonTemplate(def.shape, indent + "  "));
    } else if (def.type === "array" && def.element) {
      const el = unwrap(def.element).base;
      const elDef = el._zod.def as { type: string; shape?: Shape };
      if (elDef.type === "object" && elDef.shape) {
        const cols = Object.keys(elDef.shape);
        lines.push(`${indent}${name}[N]{${cols.join(",")}}:`);
        lines.push(`${indent}  ${Object.values(elDef.shape).map(placeholder).join(",")}`);
      } else {
        lines.push(`${indent}${name}[N]: ${placeholder(def.element)},...`);
      }
    } else {
      lines.push(`${indent}${name}: ${placeholder(schema)}`);
    }
  }
  return lines.join("\n");
}
