import type * as CsvParse from "csv-parse/sync";
import { loadOnFirstUse } from "../../load-sync.js";

/** csv-parse, loaded the first time a CSV file is read (most programs never read one). */
const csv = loadOnFirstUse<typeof CsvParse>("csv-parse/sync");
import type { z } from "zod";
import { convertValue } from "../../convert/output.js";
import { ValidationError } from "../../errors.js";
import { unwrap } from "../../signature/fields.js";
import { kindOf } from "../../signature/kind.js";

/** One data row and the line it starts on (1-based), for error messages. */
export interface TableRow {
  line: number;
  values: Record<string, unknown>;
  /** CSV cells arrive as text and are converted to the field's type; JSON Lines values are typed already. */
  fromText: boolean;
}

/** A CSV file's rows, and its header: the line it is on and the columns it names (undefined for a file of blank lines). */
export interface CsvTable {
  rows: TableRow[];
  header: { line: number; columns: string[] } | undefined;
}

/**
 * Reads a CSV file's text (already decoded, BOM removed): a header row naming the columns, then one
 * record per row. RFC 4180 quoting: commas, quotes ("") and newlines inside quoted fields; CRLF or LF.
 */
export function parseCsv(text: string, file: string): CsvTable {
  // Blank lines only (spaces, any line ends): no header, no rows.
  if (text.trim() === "") return { rows: [], header: undefined };
  const lineEnds = text.split(/\r\n|\n|\r/);
  const headerLine = lineEnds.findIndex((l) => l.trim() !== "") + 1;
  let columns: string[] | undefined;
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = csv().parse(text, {
      columns: (header: string[]) => (columns = uniqueColumns(header, `${file}:${headerLine}`)),
      bom: true, skip_empty_lines: true, info: true, relax_column_count: false,
    }) as typeof records;
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    const e = error as { message?: string; lines?: number; code?: string };
    // csv-parse finds an unclosed quote at the end of the file: name the line where it opened.
    const opened = e.code === "CSV_QUOTE_NOT_CLOSED" ? unclosedQuoteLine(text) : undefined;
    const line = opened ?? (typeof e.lines === "number" ? e.lines : undefined);
    const message = opened !== undefined
      ? `the quote that opens on line ${opened} is never closed; end the field with a quote (write "" for a quote inside it)`
      : (e.message ?? String(error)).replace(/\s+/g, " ");
    throw new ValidationError(`${file}${line === undefined ? "" : `:${line}`}: not valid CSV: ${message}`, { field: file, cause: error });
  }
  const rows: TableRow[] = [];
  let previousEnd = headerLine;
  for (const { record, info } of records) {
    // A record starts on the first non-empty line after the previous one ended.
    let start = previousEnd + 1;
    while (start < info.lines && lineEnds[start - 1]?.trim() === "") start++;
    rows.push({ line: start, values: record, fromText: true });
    previousEnd = info.lines;
  }
  return { rows, header: columns === undefined ? undefined : { line: headerLine, columns } };
}

/**
 * The line (1-based) of the quote that opens the field still open at the end of the text, found as
 * csv-parse reads quotes: a quote opens a field only at its start; inside, "" is a quote and a lone
 * quote closes it. Undefined when no field is left open.
 */
function unclosedQuoteLine(text: string): number | undefined {
  let quoting = false;
  let fieldStart = true;
  let opened = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoting) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else quoting = false;
      }
      fieldStart = false;
    } else if (c === '"' && fieldStart) {
      quoting = true;
      opened = i;
    } else {
      fieldStart = c === "," || c === "\n" || c === "\r";
    }
  }
  if (!quoting) return undefined;
  return text.slice(0, opened).split(/\r\n|\n|\r/).length;
}

/** The header's column names, each once: a name given twice would leave one column silently unread (the last one wins). */
function uniqueColumns(header: string[], at: string): string[] {
  const first = new Map<string, number>();
  header.forEach((name, i) => {
    const earlier = first.get(name);
    if (earlier !== undefined) {
      throw new ValidationError(
        `${at}: the header names the column ${JSON.stringify(name)} twice (columns ${earlier + 1} and ${i + 1}); give each column its own name`,
        { field: name },
      );
    }
    first.set(name, i);
  });
  return header;
}

/** A number as written in decimal: `12`, `-3.5`, `.5`, `1e-3`. Not `0x10`, `0b1`, `0o7`, `Infinity` or `1_000`, which `Number()` would also read. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The cell as a decimal number, or NaN when it is not one. */
function decimal(cell: string): number {
  const t = cell.trim();
  return DECIMAL.test(t) ? Number(t) : Number.NaN;
}

/**
 * A CSV cell as the field's type: text as is for string and enum fields; numbers, booleans and dates
 * parsed; lists and objects written as JSON. An empty cell is null for a nullable or optional field.
 */
export function cellValue(schema: z.ZodType, cell: unknown, where: string): unknown {
  if (typeof cell !== "string") return cell;
  const u = unwrap(schema);
  const kind = kindOf(u.base);
  if (cell === "" && (u.nullable || u.optional)) return null;
  switch (kind.kind) {
    case "string":
      return cell;
    case "enum":
      return kind.values.some((v) => typeof v === "number") && Number.isFinite(decimal(cell)) ? decimal(cell) : cell;
    case "number": {
      const n = decimal(cell);
      if (!Number.isFinite(n)) throw new ValidationError(`${where}: expected a number; received ${JSON.stringify(cell)} (numbers are read in decimal, such as 12, -3.5 or 1e3)`, { field: where });
      return n;
    }
    case "boolean": {
      const b = cell.trim().toLowerCase();
      if (b === "true" || b === "1" || b === "yes") return true;
      if (b === "false" || b === "0" || b === "no") return false;
      throw new ValidationError(`${where}: expected true or false; received ${JSON.stringify(cell)}`, { field: where });
    }
    case "array":
    case "object":
    case "record":
    case "union":
    case "any": {
      const t = cell.trim();
      if (!(t.startsWith("[") || t.startsWith("{"))) return kind.kind === "union" || kind.kind === "any" ? cell : cell;
      try {
        return JSON.parse(t) as unknown;
      } catch (error) {
        throw new ValidationError(`${where}: expected JSON (a list or object) in this cell; ${error instanceof Error ? error.message : String(error)}`, { field: where });
      }
    }
    default:
      // Dates and the rest: the reply converter reads ISO text.
      try {
        return convertValue(schema, cell, where, cell);
      } catch (error) {
        throw new ValidationError(`${where}: ${error instanceof Error ? error.message : String(error)}`, { field: where });
      }
  }
}
