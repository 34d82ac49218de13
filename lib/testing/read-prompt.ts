import { toon } from "../prompt/toon-data.js";
import type { ChatMessage } from "../lm/types.js";
import { isPlainObject } from "../plain-object.js";

/**
 * What a simulated model can read from the messages a predictor sends (the text `Prompt` builds):
 * nothing here looks at the signature class or the input objects, only at the text.
 */
export interface ReadPrompt {
  /** The system text before the first `## Input fields` / `## Output fields` heading. */
  instruction: string;
  /** Output field name → what a valid value looks like (from the schema or the reply template). */
  outputs: Record<string, FieldShape>;
  /** The worked examples under `## Examples`, in order. */
  demos: { input: Record<string, unknown>; output: Record<string, unknown> }[];
  /** The input values of this call (from `## Input values` in the last user message). */
  inputs: Record<string, unknown>;
}

export type FieldShape =
  | { kind: "enum"; values: unknown[] }
  | { kind: "string" | "number" | "boolean" | "null" | "unknown" }
  | { kind: "array" }
  | { kind: "object"; fields: Record<string, FieldShape> };

const FENCE = /```[ \t]*(json|toon)[ \t]*\r?\n([\s\S]*?)```/g;
const HEADING = /^## (Input fields|Output fields|Examples|Input values)\b/m;

function section(text: string, heading: string): string | undefined {
  const start = text.search(new RegExp(`^## ${heading}\\b`, "m"));
  if (start < 0) return undefined;
  const rest = text.slice(start + 3 + heading.length);
  const end = rest.search(HEADING);
  return end < 0 ? rest : rest.slice(0, end);
}

function fences(text: string): unknown[] {
  const out: unknown[] = [];
  for (const m of text.matchAll(FENCE)) {
    try {
      out.push(m[1] === "toon" ? toon().decode(m[2]!.replace(/\s+$/, "")) : JSON.parse(m[2]!));
    } catch {
      out.push(undefined); // an unreadable block reads as nothing, like a model skimming past it
    }
  }
  return out;
}

function asRecord(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

/** A JSON Schema node → the shape of a valid value. */
function fromJsonSchema(node: Record<string, unknown>): FieldShape {
  if (Array.isArray(node.enum)) return { kind: "enum", values: node.enum };
  if ("const" in node) return { kind: "enum", values: [node.const] };
  const variants = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
  if (Array.isArray(variants)) {
    const first = variants.find((v) => v.type !== "null") ?? variants[0];
    return first ? fromJsonSchema(first) : { kind: "unknown" };
  }
  const type = Array.isArray(node.type) ? node.type.find((t) => t !== "null") : node.type;
  if (type === "object") {
    const fields: Record<string, FieldShape> = {};
    for (const [k, v] of Object.entries(asRecord(node.properties))) fields[k] = fromJsonSchema(asRecord(v));
    return { kind: "object", fields };
  }
  if (type === "array") return { kind: "array" };
  if (type === "integer" || type === "number") return { kind: "number" };
  if (type === "string" || type === "boolean" || type === "null") return { kind: type };
  return { kind: "unknown" };
}

/** One line of a TOON field summary, BAML class or TOON reply template → a top-level field. */
function fromLine(line: string): [string, FieldShape] | undefined {
  const m = /^\s{0,2}([A-Za-z_$][\w$]*)\??(?:\[N\])?:?\s+(.+)$/.exec(line);
  if (!m || line.startsWith("class ") || m[1] === "class") return undefined;
  const rest = m[2]!.trim();
  const quoted = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((q) => JSON.parse(`"${q[1]}"`) as string);
  if (quoted.length > 0) return [m[1]!, { kind: "enum", values: quoted }];
  const angle = /^<([^>]*)>/.exec(rest);
  if (angle) {
    const body = angle[1]!.replace(/ or null$/, "");
    if (body.includes("|")) return [m[1]!, { kind: "enum", values: body.split("|") }];
    return [m[1]!, { kind: /^(integer|number)$/.test(body) ? "number" : body === "boolean" ? "boolean" : "string" }];
  }
  if (/^(int|integer|float|number)\b/.test(rest)) return [m[1]!, { kind: "number" }];
  if (/^bool(ean)?\b/.test(rest)) return [m[1]!, { kind: "boolean" }];
  if (/^string\b/.test(rest)) return [m[1]!, { kind: "string" }];
  return undefined;
}

function readOutputs(system: string): Record<string, FieldShape> {
  const text = section(system, "Output fields") ?? "";
  const schema = asRecord(fences(text)[0]);
  if (schema.type === "object" || schema.properties !== undefined) {
    const shape = fromJsonSchema(schema);
    if (shape.kind === "object") return shape.fields;
  }
  // Not JSON Schema: read the field lines of the BAML / TOON summary, else of the TOON reply template.
  const template = /in this form:\n```toon\n([\s\S]*?)```/.exec(system)?.[1] ?? "";
  const fields: Record<string, FieldShape> = {};
  for (const line of `${text}\n${template}`.split("\n")) {
    const f = fromLine(line);
    if (f && !(f[0] in fields)) fields[f[0]] = f[1];
  }
  return fields;
}

function readDemos(system: string): ReadPrompt["demos"] {
  const text = section(system, "Examples");
  if (text === undefined) return [];
  return text.split(/^### Example \d+\s*$/m).slice(1).map((block) => {
    const [inputPart, outputPart] = block.includes("Output:") ? [block.slice(0, block.lastIndexOf("Output:")), block.slice(block.lastIndexOf("Output:"))] : ["", block];
    return { input: asRecord(fences(inputPart)[0]), output: asRecord(fences(outputPart)[0]) };
  });
}

/** Reads instruction, output fields, demos and input values out of a predictor's messages. */
export function readPrompt(messages: readonly ChatMessage[]): ReadPrompt {
  const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const user = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const head = system.search(HEADING);
  const instruction = (head < 0 ? system : system.slice(0, head)).trim();
  return {
    instruction,
    outputs: readOutputs(system),
    demos: readDemos(system),
    inputs: asRecord(fences(section(user, "Input values") ?? "")[0]),
  };
}
