import { decode, encode } from "@toon-format/toon";
import type { z } from "zod";
import { ToonDecodeError } from "../errors.js";
import type { Shape } from "../signature/signature.js";
import { DATE_HINT, DATETIME_HINT, INSTANT_HINT, describeType, resolve } from "../convert/kind.js";

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

/** A placeholder for one value of `schema`, for the output template (`<positive|negative>`, `<integer>`). */
function placeholder(schema: z.ZodType): string {
  const r = resolve(schema);
  const k = r.kind;
  let text: string;
  if (k.kind === "date") text = DATE_HINT;
  else if (k.kind === "datetime") text = DATETIME_HINT;
  else if (k.kind === "instant") text = INSTANT_HINT;
  else if (k.kind === "enum" || k.kind === "literal") text = k.values.map(String).join("|");
  else if (k.kind === "number") text = k.int ? "integer" : "number";
  else text = describeType(r.base);
  return `<${text}${r.optional || r.nullable ? " or null" : ""}>`;
}

/**
 * The output template shown to the model in data format TOON: each field with a placeholder,
 * arrays of objects in TOON's tabular form.
 */
export function toonTemplate(shape: Shape, indent = ""): string {
  const lines: string[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const k = resolve(schema).kind;
    if (k.kind === "object") {
      lines.push(`${indent}${name}:`, toonTemplate(k.shape, indent + "  "));
    } else if (k.kind === "array") {
      const el = resolve(k.element).kind;
      if (el.kind === "object") {
        lines.push(`${indent}${name}[N]{${Object.keys(el.shape).join(",")}}:`);
        lines.push(`${indent}  ${Object.values(el.shape).map(placeholder).join(",")}`);
      } else {
        lines.push(`${indent}${name}[N]: ${placeholder(k.element)},...`);
      }
    } else {
      lines.push(`${indent}${name}: ${placeholder(schema)}`);
    }
  }
  return lines.join("\n");
}
