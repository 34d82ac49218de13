import type * as Toon from "@toon-format/toon";
import { loadOnFirstUse } from "../load-sync.js";
import type { z } from "zod";
import { ToonDecodeError } from "../errors.js";
import type { Shape } from "../signature/signature.js";
import { DATE_HINT, DATETIME_HINT, INSTANT_HINT, resolve } from "../signature/kind.js";
import { PLAIN, renderType, type TypeFormat } from "../signature/type-text.js";
import { isFlat } from "../signature/toon-schema.js";

const loadToon = loadOnFirstUse<typeof Toon>("@toon-format/toon", "toon.cjs");

/** The TOON codec, loaded the first time a prompt or reply uses data format TOON. */
export function toon(): typeof Toon {
  return loadToon();
}

/** Values in TOON, inside a ```toon fence. */
export function toonFence(values: Record<string, unknown>): string {
  return "```toon\n" + toon().encode(values) + "\n```";
}

const TOON_FENCE = /```[ \t]*toon[ \t]*\r?\n([\s\S]*?)```/i;

/** Decodes a TOON reply (fenced or bare). Malformed TOON raises `ToonDecodeError` with the raw reply. */
export function parseToonReply(raw: string): unknown {
  const match = TOON_FENCE.exec(raw);
  const body = (match ? match[1]! : raw).replace(/\s+$/, "");
  try {
    return toon().decode(body);
  } catch (error) {
    const err = error as { message?: string; line?: number };
    throw new ToonDecodeError(`Model reply is not valid TOON: ${err.message ?? String(error)}`, {
      raw, line: err.line, received: body.length > 200 ? `${body.slice(0, 200)}…` : body, cause: error,
    });
  }
}

/** Placeholder words: the wire form of dates, `a|b` for choices, plain words for the rest. */
const PLACEHOLDER: TypeFormat = {
  ...PLAIN,
  words: {
    ...PLAIN.words,
    date: DATE_HINT,
    datetime: DATETIME_HINT,
    instant: INSTANT_HINT,
    choice: (values) => values.map(String).join("|"),
  },
  recursive: (_r, first) => `same fields as "${first}"`,
};

/** A placeholder for one value of `schema`, for the output template (`<positive|negative>`, `<integer>`). */
function placeholder(schema: z.ZodType, name: string, stack: Map<object, string>): string {
  return `<${renderType(schema, PLACEHOLDER, name, stack)}>`;
}

/**
 * The output template shown to the model in data format TOON: each field with a placeholder,
 * arrays of objects in TOON's tabular form. A struct met again inside itself is written as a
 * placeholder naming the field that already shows its fields.
 */
export function toonTemplate(shape: Shape, indent = "", stack = new Map<object, string>()): string {
  const lines: string[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const r = resolve(schema);
    const k = r.kind;
    if (k.kind === "object" && !stack.has(r.base)) {
      stack.set(r.base, name);
      lines.push(`${indent}${name}:`, toonTemplate(k.shape, indent + "  ", stack));
      stack.delete(r.base);
    } else if (k.kind === "array") {
      const el = resolve(k.element);
      if (el.kind.kind === "object" && !stack.has(el.base)) {
        stack.set(el.base, name);
        const shape = el.kind.shape;
        if (isFlat(shape)) {
          lines.push(`${indent}${name}[N]{${Object.keys(shape).join(",")}}:`);
          lines.push(`${indent}  ${Object.entries(shape).map(([n, s]) => placeholder(s, n, stack)).join(",")}`);
        } else {
          // A row cannot hold a list or an object: TOON writes such items as "- " blocks.
          const item = toonTemplate(shape, `${indent}    `, stack);
          lines.push(`${indent}${name}[N]:`, `${indent}  - ${item.trimStart()}`);
        }
        stack.delete(el.base);
      } else {
        lines.push(`${indent}${name}[N]: ${placeholder(k.element, name, stack)},...`);
      }
    } else {
      lines.push(`${indent}${name}: ${placeholder(schema, name, stack)}`);
    }
  }
  return lines.join("\n");
}
