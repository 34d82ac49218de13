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

/**
 * The values read from a message's text with each media placeholder ("[image 1 below]") replaced by
 * the value the message carries, so a rule sees the `Image` itself.
 */
function withMedia(values: Record<string, unknown>, message: ChatMessage | undefined): Record<string, unknown> {
  const media = message?.media ?? [];
  if (media.length === 0) return values;
  const byPlaceholder = new Map<string, unknown>();
  const counts: Record<string, number> = {};
  for (const { value } of media) byPlaceholder.set(`[${value.kind} ${(counts[value.kind] = (counts[value.kind] ?? 0) + 1)} below]`, value);
  const swap = (v: unknown): unknown => {
    if (typeof v === "string") return byPlaceholder.get(v) ?? v;
    if (Array.isArray(v)) return v.map(swap);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)]));
    return v;
  };
  return swap(values) as Record<string, unknown>;
}

/** Demos sent as earlier turns (a prompt does so when they hold media): each user turn and the assistant turn after it. */
function turnDemos(messages: readonly ChatMessage[]): ReadPrompt["demos"] {
  const turns = messages.filter((m) => m.role !== "system");
  const demos: ReadPrompt["demos"] = [];
  for (let i = 0; i + 1 < turns.length - 1; i += 2) {
    if (turns[i]!.role !== "user" || turns[i + 1]!.role !== "assistant") break;
    demos.push({
      input: withMedia(asRecord(fences(section(turns[i]!.content, "Input values") ?? "")[0]), turns[i]),
      output: asRecord(fences(turns[i + 1]!.content)[0]),
    });
  }
  return demos;
}

/** Reads instruction, output fields, demos and input values out of a predictor's messages (a media value as the value itself). */
export function readPrompt(messages: readonly ChatMessage[]): ReadPrompt {
  const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const last = [...messages].reverse().find((m) => m.role === "user");
  const user = last?.content ?? "";
  const head = system.search(HEADING);
  const instruction = (head < 0 ? system : system.slice(0, head)).trim();
  const demos = readDemos(system);
  return {
    instruction,
    outputs: readOutputs(system),
    demos: demos.length > 0 ? demos : turnDemos(messages),
    inputs: withMedia(asRecord(fences(section(user, "Input values") ?? "")[0]), last),
  };
}
