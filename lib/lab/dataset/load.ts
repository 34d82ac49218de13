// lib/lab/dataset/: datasets for experiments — a folder's JSONL or CSV splits (CSV cells in table.ts)
// or a bundled dataset by name, read against the task's signature, checked, and hashed for the manifest.
import { builtin, nodeCrypto } from "../../load-sync.js";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import { FewShotExample } from "../../prompt/few-shot.js";
import { Signature, type Shape, type SignatureClass } from "../../signature/signature.js";
import { isPlainObject } from "../../plain-object.js";
import { cellValue, parseCsv, type CsvTable, type TableRow } from "./table.js";
import { datasetMediaCell } from "../../media/dataset-files.js";
import { mediaTypes } from "../../media/field.js";

/** The datasets shipped in `datasets/` (built by scripts/build-datasets.ts). */
const BUNDLED_DATASETS = ["poem-sentiment", "banking77", "gsm8k", "restaurant8k", "squality-ratings", "shapes"] as const;

const SPLITS = ["train", "dev", "test"] as const;
/** The three splits of a dataset. */
export type SplitName = (typeof SPLITS)[number];

/** Where a dataset came from: its name, folder, licence, source, and each split's rows and file sha256. */
export interface DatasetInfo {
  /** The bundled name, or the folder's base name. */
  name: string;
  /** The folder the dataset was read from (absolute). */
  path: string;
  /** From ATTRIBUTION.md's "Licence:" line; null when the folder has no ATTRIBUTION.md. */
  licence: string | null;
  /** The source repository and commit, from ATTRIBUTION.md; null when not given. */
  source: { repository: string; commit: string | null } | null;
  /** Per split: rows and the sha256 of the file it came from (the data file's, for a split data file). */
  splits: Record<SplitName, { rows: number; sha256: string }>;
  /** Each file read, by file name → sha256 of its bytes: the data files, and signature.json when the signature came from it. */
  files: Record<string, string>;
}

/** What `loadDataset` resolves with: the three splits as examples, the task signature, and `info`. */
export interface Dataset {
  train: FewShotExample[];
  dev: FewShotExample[];
  test: FewShotExample[];
  /** The task signature built from the folder's signature.json. */
  signature: SignatureClass;
  info: DatasetInfo;
}

/** A field of signature.json. */
interface FieldSpec {
  type: string;
  values?: string[];
  nullable?: boolean;
  description?: string;
}

interface SignatureSpec {
  name?: string;
  description?: string;
  input?: Record<string, FieldSpec>;
  output?: Record<string, FieldSpec>;
}

/** Options of `loadDataset`: a signature for a folder without signature.json, and the seed of a single data file's split. */
export interface LoadDatasetOptions {
  /** The task signature; needed when the folder has no signature.json (and used instead of it when given). */
  signature?: SignatureClass;
  /** Seeds the 60/20/20 split of a single data.jsonl / data.csv (default 0). */
  seed?: number;
}

/**
 * Loads a bundled dataset by name, or a folder: `train`, `dev` and `test` as `.jsonl` (one JSON object
 * a line) or `.csv` (a header row naming the columns), or one `data.jsonl` / `data.csv` split 60/20/20
 * by a seeded hash of each row's id. Columns are the signature's field names plus an optional `id`
 * (rows without one get `<split>-<n>`, or `row-<n>` in a data file). The signature comes from
 * `options.signature`, else the folder's `signature.json`. Errors name the file and the line.
 */
export async function loadDataset(nameOrPath: string, options: LoadDatasetOptions = {}): Promise<Dataset> {
  const folder = locate(nameOrPath);
  const fromFolder = options.signature === undefined ? await signatureOf(folder) : undefined;
  const signature = options.signature ?? fromFolder!.signature;
  const splits = {} as Record<SplitName, FewShotExample[]>;
  const hashes = {} as DatasetInfo["splits"];
  const files: Record<string, string> = {};
  const perSplit = SPLITS.map((split) => [split, dataFile(folder, split)] as const);
  const present = perSplit.filter(([, f]) => f !== undefined);
  if (present.length === 0) {
    const file = dataFile(folder, "data");
    if (file === undefined) {
      throw new ValidationError(
        `${folder} holds no data: expected train, dev and test files (.jsonl or .csv), or one data.jsonl / data.csv to split 60/20/20`,
        { field: "dataset" },
      );
    }
    const { rows, header, sha256 } = await readRows(file, signature);
    files[basename(file)] = sha256;
    const all = examplesFrom(rows, file, signature, "row", new Map(), header);
    // Nothing to split: say which file, not (later) that the test split is empty.
    if (all.length === 0) {
      const what = header === undefined ? "no examples" : "no examples, only its header";
      throw new ValidationError(`${file}: the file has ${what}; add one ${header === undefined ? "line" : "row"} per example`, { field: "dataset" });
    }
    const seed = options.seed ?? 0;
    const ranked = all.map((e) => [e, fraction(seed, e.id!)] as const).sort((a, b) => a[1] - b[1] || (a[0].id! < b[0].id! ? -1 : 1)).map(([e]) => e);
    const cut1 = Math.round(ranked.length * 0.6);
    const cut2 = Math.round(ranked.length * 0.8);
    splits.train = ranked.slice(0, cut1);
    splits.dev = ranked.slice(cut1, cut2);
    splits.test = ranked.slice(cut2);
    for (const split of SPLITS) hashes[split] = { rows: splits[split].length, sha256 };
  } else {
    const missing = perSplit.filter(([, f]) => f === undefined).map(([s]) => s);
    if (missing.length > 0) {
      throw new ValidationError(
        `${folder} has ${present.map(([, f]) => basename(f!)).join(", ")} but no ${missing.join(" or ")} split (.jsonl or .csv); give all three, or one data.jsonl / data.csv`,
        { field: "dataset" },
      );
    }
    // An id names one example: the same id in two splits would put one example in both (a test example trained on).
    const taken = new Map<string, string>();
    for (const [split, file] of perSplit) {
      const { rows, header, sha256 } = await readRows(file!, signature);
      splits[split] = examplesFrom(rows, file!, signature, split, taken, header);
      // The file's bytes, byte order mark included: what sha256sum prints.
      hashes[split] = { rows: splits[split].length, sha256 };
      files[basename(file!)] = sha256;
    }
  }
  // The signature decides how rows are read and scored (its enum values, their order): hashed with the data.
  if (fromFolder !== undefined) files["signature.json"] = fromFolder.sha256;
  const attribution = join(folder, "ATTRIBUTION.md");
  const notes = existsSync(attribution) ? utf8Text(readFileSync(attribution), attribution) : undefined;
  return {
    ...splits,
    signature,
    info: {
      name: (BUNDLED_DATASETS as readonly string[]).includes(nameOrPath) ? nameOrPath : folder.split(/[\\/]/).pop() ?? folder,
      path: folder,
      licence: notes === undefined ? null : (/^- Licence: ([^(\n]+?)\s*(\(|$)/m.exec(notes)?.[1] ?? null),
      source: notes === undefined ? null : sourceOf(notes),
      splits: hashes,
      files,
    },
  };
}

async function signatureOf(folder: string): Promise<{ signature: SignatureClass; sha256: string }> {
  const signaturePath = join(folder, "signature.json");
  if (!existsSync(signaturePath)) {
    throw new ValidationError(
      `${folder} has no signature.json: pass the task signature, loadDataset(folder, { signature }) (or "signature" in defineExperiment), or add a signature.json`,
      { field: "signature" },
    );
  }
  const bytes = await readBytes(signaturePath, "the task signature");
  return { signature: signatureFrom(parseJson(bytes, signaturePath), signaturePath), sha256: nodeCrypto().createHash("sha256").update(bytes).digest("hex") };
}

/** The split's file: `<name>.jsonl` or `<name>.csv` (both is ambiguous); undefined when neither exists. */
function dataFile(folder: string, name: string): string | undefined {
  const found = [".jsonl", ".csv"].map((ext) => join(folder, `${name}${ext}`)).filter((f) => existsSync(f));
  if (found.length > 1) throw new ValidationError(`${folder} has both ${name}.jsonl and ${name}.csv: keep one`, { field: "dataset" });
  return found[0];
}

/** A data file's rows (and a CSV file's header), and the sha256 of its bytes. A CSV file without a header is refused, naming the file. */
async function readRows(file: string, signature: SignatureClass): Promise<{ rows: TableRow[]; header?: CsvTable["header"]; sha256: string }> {
  const bytes = await readBytes(file, `the data file`);
  const text = utf8Text(bytes, file);
  const sha256 = nodeCrypto().createHash("sha256").update(bytes).digest("hex");
  if (!file.endsWith(".csv")) return { rows: jsonLines(text, file), sha256 };
  const { rows, header } = parseCsv(text, file);
  if (header === undefined) {
    throw new ValidationError(`${file}: the file is empty; a CSV file starts with a header row naming its columns: ${expectedColumns(signature)}`, { field: "dataset" });
  }
  return { rows, header, sha256 };
}

/** The columns a data file of this signature has: each field, then the optional id. */
function expectedColumns(signature: SignatureClass): string {
  return `${[...Object.keys(signature.input ?? {}), ...Object.keys(signature.output)].join(", ")} (and an optional id)`;
}

/** A seeded position in [0, 1) for an id: the data file's split does not depend on row order. */
function fraction(seed: number, id: string): number {
  return nodeCrypto().createHash("sha256").update(`${seed}\u0000${id}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The folder holding the bundled datasets: `datasets/` at the package root (from dist/ or from source). */
function bundledDatasetsFolder(): string {
  return join(packageRoot(), "datasets");
}

/** typelm's package root: the nearest folder above this file whose package.json is typelm's. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "typelm") return dir;
    const up = dirname(dir);
    if (up === dir) throw new ValidationError("Cannot find typelm's package root (its package.json) above lib/lab: is the package installed whole?");
    dir = up;
  }
}

function locate(nameOrPath: string): string {
  if (typeof nameOrPath !== "string" || nameOrPath.trim() === "") {
    throw new ValidationError(`loadDataset expects a dataset name or folder; received ${JSON.stringify(nameOrPath)}`, { field: "name" });
  }
  const looksLikePath = isAbsolute(nameOrPath) || nameOrPath.startsWith(".") || /[\\/]/.test(nameOrPath);
  if (!looksLikePath) {
    if (!(BUNDLED_DATASETS as readonly string[]).includes(nameOrPath)) {
      throw new ValidationError(
        `Unknown dataset "${nameOrPath}": the bundled ones are ${BUNDLED_DATASETS.join(", ")}; or give a folder path (e.g. "./my-data") ` +
          "holding train.jsonl, dev.jsonl, test.jsonl and signature.json",
        { field: "name" },
      );
    }
    return join(bundledDatasetsFolder(), nameOrPath);
  }
  const folder = resolve(nameOrPath);
  if (!existsSync(folder)) {
    throw new ValidationError(`Dataset folder ${folder} does not exist: expected a folder holding train.jsonl, dev.jsonl, test.jsonl and signature.json`, { field: "name" });
  }
  return folder;
}

async function readBytes(file: string, what: string): Promise<Buffer> {
  try {
    return await builtin("node:fs/promises").readFile(file);
  } catch (error) {
    throw new ValidationError(`Cannot read ${what} at ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * A dataset file's text. A byte order mark at the start is dropped (editors on Windows write one);
 * bytes that are not UTF-8 are refused with their line, rather than read as U+FFFD: the rows would
 * silently differ from the file, and from the hash reported for it.
 */
function utf8Text(bytes: Buffer, file: string): string {
  const body = UTF8_BOM.every((b, i) => bytes[i] === b) ? bytes.subarray(UTF8_BOM.length) : bytes;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
  } catch (error) {
    const { line, offset } = firstInvalidUtf8(body);
    const skipped = body.length === bytes.length ? 0 : UTF8_BOM.length;
    throw new ValidationError(
      `${file}:${line}: line ${line} is not valid UTF-8 (byte 0x${body[offset]!.toString(16).padStart(2, "0")} at offset ${offset + skipped} of the file); ` +
        "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
      { field: file, cause: error },
    );
  }
}

/**
 * Where the first invalid UTF-8 sequence starts: the lenient decoder puts U+FFFD for it, and the text
 * before it re-encodes to exactly its bytes. A U+FFFD the file itself holds (bytes EF BF BD) is skipped.
 */
function firstInvalidUtf8(bytes: Buffer): { line: number; offset: number } {
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  let offset = 0;
  for (let at = text.indexOf("\ufffd"); at !== -1; at = text.indexOf("\ufffd", at + 1)) {
    offset = Buffer.byteLength(text.slice(0, at));
    if (!(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) break;
  }
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) line++;
  return { line, offset };
}

function parseJson(bytes: Buffer, file: string): unknown {
  const text = utf8Text(bytes, file);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** Builds the signature class signature.json describes. */
function signatureFrom(raw: unknown, file: string): SignatureClass {
  const spec = raw as SignatureSpec;
  if (spec === null || typeof spec !== "object" || typeof spec.output !== "object" || spec.output === null) {
    throw new ValidationError(`${file}: expected { name, description, input: { field: spec }, output: { field: spec } }`, { field: "output" });
  }
  const shape = (fields: Record<string, FieldSpec> | undefined, side: string): Shape =>
    Object.fromEntries(Object.entries(fields ?? {}).map(([name, f]) => [name, fieldSchema(f, `${file}: ${side}.${name}`)]));
  return Signature.define({
    name: spec.name ?? "DatasetTask",
    description: spec.description ?? "",
    input: shape(spec.input, "input"),
    output: shape(spec.output, "output"),
  });
}

function fieldSchema(f: FieldSpec, where: string): z.ZodType {
  let schema: z.ZodType;
  switch (f?.type) {
    case "string": schema = z.string(); break;
    case "number": schema = z.number(); break;
    case "integer": schema = z.number().int(); break;
    case "boolean": schema = z.boolean(); break;
    case "string[]": schema = z.array(z.string()); break;
    case "image": case "audio": case "document": schema = mediaTypes[f.type](); break;
    case "enum":
      if (!Array.isArray(f.values) || f.values.length === 0 || !f.values.every((v) => typeof v === "string")) {
        throw new ValidationError(`${where}: an enum needs "values", a non-empty list of strings`, { field: where });
      }
      schema = z.enum(f.values as [string, ...string[]]);
      break;
    default:
      throw new ValidationError(
        `${where}: unknown type ${JSON.stringify(f?.type)}; expected string, number, integer, boolean, enum, string[], image, audio or document`,
        { field: where },
      );
  }
  if (f.nullable === true) schema = schema.nullable();
  return f.description === undefined ? schema : schema.describe(f.description);
}

function jsonLines(text: string, file: string): TableRow[] {
  const rows: TableRow[] = [];
  text.split("\n").forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    if (line.trim() === "") return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(`${at}: line ${i + 1} is not valid JSON (${error instanceof Error ? error.message : String(error)}); each line must be one JSON object`, { field: file, cause: error });
    }
    if (!isPlainObject(row)) {
      throw new ValidationError(`${at}: line ${i + 1} must be a JSON object; received ${JSON.stringify(row)}`, { field: file });
    }
    rows.push({ line: i + 1, values: row, fromText: false });
  });
  return rows;
}

/**
 * Rows as examples of the signature: ids checked (or given), every declared field present and of its
 * type. `taken` holds the ids of the splits read before (id → `file:line`), and gets this file's.
 */
function examplesFrom(
  rows: readonly TableRow[], file: string, signature: SignatureClass, idPrefix: string, taken: Map<string, string> = new Map(),
  header?: CsvTable["header"],
): FewShotExample[] {
  const inputs = Object.entries(signature.input ?? {});
  const outputs = Object.entries(signature.output);
  const seen = new Map<string, number>();
  const examples: FewShotExample[] = [];
  const fromSignatureJson = existsSync(join(dirname(file), "signature.json")) ? " (signature.json)" : "";
  // A CSV file's columns are its header's: a missing one is the header's fault, whether or not rows follow.
  const missing = header === undefined ? undefined : [...inputs, ...outputs].find(([name]) => !header.columns.includes(name));
  if (header !== undefined && missing !== undefined) {
    throw new ValidationError(
      `${file}:${header.line}: the header has no column "${missing[0]}" the task signature declares${fromSignatureJson}; ` +
        `columns found: ${header.columns.join(", ")}; expected: ${expectedColumns(signature)}`,
      { field: missing[0] },
    );
  }
  rows.forEach((r, n) => {
    const at = `${file}:${r.line}`;
    const row = r.values;
    const rawId = Object.hasOwn(row, "id") ? row.id : undefined;
    let id: string;
    if (rawId === undefined || rawId === null || rawId === "") id = `${idPrefix}-${n + 1}`;
    else if (typeof rawId === "string") id = rawId;
    else if (typeof rawId === "number" && Number.isFinite(rawId)) id = String(rawId);
    else throw new ValidationError(`${at}: "id" must be a string; received ${JSON.stringify(rawId)}`, { field: "id" });
    const earlier = seen.get(id);
    if (earlier !== undefined) throw new ValidationError(`${at}: id "${id}" was already used on line ${earlier}`, { field: "id" });
    const elsewhere = taken.get(id);
    if (elsewhere !== undefined) {
      throw new ValidationError(`${at}: id "${id}" is also in another split, at ${elsewhere}; an example belongs to one split only (train, dev or test)`, { field: "id" });
    }
    seen.set(id, r.line);
    taken.set(id, at);
    const take = (fields: [string, z.ZodType][]) => Object.fromEntries(fields.map(([name, schema]) => {
      // Own fields only: "constructor" or "toString" is in every object, and would be read as a function.
      if (!Object.hasOwn(row, name)) {
        const what = r.fromText ? `has no column "${name}"` : `row "${id}" is missing the field "${name}"`;
        throw new ValidationError(`${at}: ${what} the task signature declares${fromSignatureJson}`, { field: name });
      }
      let value = row[name];
      const media = datasetMediaCell(schema, value, dirname(file), `${at}: row "${id}" field "${name}"`, r.fromText);
      // CSV cells are text; JSON values that are text (dates, say) are read the same way.
      if (media !== undefined) value = media;
      else if (r.fromText || (typeof value === "string" && !schema.safeParse(value).success)) value = cellValue(schema, value, `${at}: row "${id}" field "${name}"`);
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        throw new ValidationError(
          `${at}: row "${id}" field "${name}" does not fit the signature: ${parsed.error.issues[0]?.message ?? "invalid"}; received ${JSON.stringify(row[name])}`,
          { field: name },
        );
      }
      return [name, parsed.data];
    }));
    examples.push(new FewShotExample({ id, input: take(inputs), output: take(outputs) }));
  });
  return examples;
}

function sourceOf(notes: string): DatasetInfo["source"] {
  const line = /^- Source: (.*)$/m.exec(notes)?.[1];
  if (line === undefined) return null;
  const repository = /\[([^\]]+)\]/.exec(line)?.[1] ?? line.split(",")[0]!.trim();
  return { repository, commit: /commit `?([0-9a-f]{7,40})`?/.exec(line)?.[1] ?? null };
}
