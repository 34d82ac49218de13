import { OutputError } from "../errors.js";

/**
 * Pulls the JSON value out of what models really send: bare JSON, a fenced ```json block, JSON
 * inside prose, raw newlines or tabs inside strings, a trailing comma. Throws `OutputError`
 * (keeping the raw reply) when nothing usable is found.
 */
export function extractJson(raw: string): unknown {
  const text = raw.trim();
  const direct = tryParse(text);
  if (direct.ok) return direct.value;

  for (const block of fencedBlocks(text)) {
    const parsed = tryParse(block);
    if (parsed.ok) return parsed.value;
  }
  for (const candidate of balancedCandidates(text)) {
    const parsed = tryParse(candidate);
    if (parsed.ok) return parsed.value;
  }
  throw new OutputError(
    `Model reply holds no JSON object: expected a JSON object (bare or in a \`\`\`json block), received ${describeReply(text)}`,
    { raw, expected: "a JSON object", received: text.length > 200 ? `${text.slice(0, 200)}…` : text },
  );
}

function describeReply(text: string): string {
  if (text.length === 0) return "an empty reply";
  const head = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return JSON.stringify(head);
}

type Parsed = { ok: true; value: unknown } | { ok: false };

/** JSON.parse, then the same after repairing the usual model mistakes. Only objects and arrays count. */
function tryParse(text: string): Parsed {
  const first = text[0];
  if (first !== "{" && first !== "[") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // repaired below; repairing only after a failure keeps well-formed replies cheap
  }
  try {
    return { ok: true, value: JSON.parse(repair(text)) };
  } catch {
    return { ok: false };
  }
}

/** Escapes raw control characters inside strings and drops trailing commas before `}` or `]`. */
export function repair(text: string): string {
  let out = "";
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (escaped) {
        escaped = false;
        out += ch;
      } else if (ch === "\\") {
        escaped = true;
        out += ch;
      } else if (ch === '"') {
        inString = false;
        out += ch;
      } else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (ch < " ") out += `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
      else out += ch;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === ",") {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] !== "}" && text[j] !== "]") out += ch;
    } else out += ch;
  }
  return out;
}

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n([\s\S]*?)```/g;

/** Contents of fenced code blocks, ```json ones first. */
function fencedBlocks(text: string): string[] {
  const json: string[] = [];
  const other: string[] = [];
  for (const m of text.matchAll(FENCE)) {
    const lang = (m[1] ?? "").toLowerCase();
    const body = (m[2] ?? "").trim();
    if (lang === "json" || lang === "jsonc" || lang === "json5") json.push(body);
    else other.push(body);
  }
  return [...json, ...other];
}

/**
 * Every JSON object written in `text`, in order of appearance: each balanced `{...}` span (string-aware,
 * an object's interior not searched again) that parses, after the usual repairs, to an object. No
 * limit on their number, unlike `extractJson`, which takes the first usable value.
 */
export function jsonObjectsIn(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    const end = matchingClose(text, start);
    if (end < start) continue;
    const parsed = tryParse(text.slice(start, end + 1));
    if (parsed.ok && parsed.value !== null && typeof parsed.value === "object" && !Array.isArray(parsed.value)) {
      found.push(parsed.value as Record<string, unknown>);
      start = end; // its interior is part of it
    }
  }
  return found;
}

/** Each balanced `{...}` / `[...]` span in prose (string-aware), in order of appearance. */
function balancedCandidates(text: string): string[] {
  const found: string[] = [];
  for (let start = 0; start < text.length; start++) {
    const open = text[start];
    if (open !== "{" && open !== "[") continue;
    const end = matchingClose(text, start);
    if (end > start) {
      found.push(text.slice(start, end + 1));
      if (found.length >= 8) break;
      if (open === "{") start = end; // an object found: skip its interior
    }
  }
  return found;
}

function matchingClose(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}
