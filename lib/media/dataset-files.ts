/**
 * Media in dataset files: a JSONL value `{"file": "images/001.png"}` (or a list of them, for
 * `z.array(t.image())`) and a CSV cell holding a relative path, at a field declared `t.image()`,
 * `t.audio()` or `t.document()`, are read as media from beside the dataset file. A path that leaves
 * the dataset's folder (`..`, an absolute path, a symbolic link pointing outside) is refused, so a
 * dataset cannot make the loader read files elsewhere on the machine.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { z } from "zod";
import { ValidationError } from "../errors.js";
import { mediaKind } from "./field.js";
import { MEDIA_CLASSES, type MediaKind, type MediaSource, type MediaValue } from "./media.js";

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "nonoptional", "catch"]);

/** The schema inside optional, nullable and default wrappers (media/ sits below signature/, so not its `unwrap`). */
function unwrapped(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let def = s._zod.def as { type: string; innerType?: z.ZodType }; WRAPPERS.has(def.type) && def.innerType !== undefined; def = s._zod.def as typeof def) s = def.innerType;
  return s;
}

/** Whether `path` is inside `root` (not `root` itself). */
function within(root: string, path: string): boolean {
  const r = relative(root, path);
  return r !== "" && r !== ".." && !r.startsWith(`..${sep}`) && !isAbsolute(r);
}

/** The file a dataset's media path names, checked to lie inside `folder`. */
export function datasetMediaPath(folder: string, path: unknown, where: string): string {
  const hint = 'a path relative to the dataset\'s folder, such as "images/001.png"';
  if (typeof path !== "string" || path.trim() === "") throw new ValidationError(`${where}: expected ${hint}; received ${JSON.stringify(path)}`, { field: where });
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]|^\\\\/.test(path)) {
    throw new ValidationError(`${where}: the media path "${path}" is absolute; a dataset's media files are read from its own folder (${folder}): give ${hint}`, { field: where });
  }
  const full = resolve(folder, path);
  if (!within(folder, full)) {
    throw new ValidationError(`${where}: the media path "${path}" leads outside the dataset's folder (${folder}); media files must lie inside it: give ${hint}`, { field: where });
  }
  if (!existsSync(full) || !statSync(full).isFile()) throw new ValidationError(`${where}: the media file "${path}" does not exist in ${folder}`, { field: where });
  if (!within(realpathSync(folder), realpathSync(full))) {
    throw new ValidationError(`${where}: the media path "${path}" is a symbolic link leading outside the dataset's folder (${folder}); copy the file into the folder instead`, { field: where });
  }
  return full;
}

function load(kind: MediaKind, folder: string, cell: unknown, where: string, fromText: boolean): unknown {
  if (cell === null || (fromText && cell === "")) return null;
  const path = fromText ? cell : typeof cell === "object" && !Array.isArray(cell) ? (cell as { file?: unknown }).file : undefined;
  if (!fromText && (typeof cell !== "object" || Array.isArray(cell) || Object.keys(cell).length !== 1 || typeof path !== "string")) {
    throw new ValidationError(`${where}: a media value in a JSONL file is {"file": "<path relative to the dataset's folder>"}; received ${JSON.stringify(cell)}`, { field: where });
  }
  const Kind: new (source: MediaSource) => MediaValue = MEDIA_CLASSES[kind];
  return new Kind({ bytes: readFileSync(datasetMediaPath(folder, path, where)) });
}

/**
 * The value of a dataset cell at a media field (`t.image()` and friends, or an array of them in a
 * JSONL file), read from `folder`; undefined when the field holds no media, so the caller reads the
 * cell as usual. `where` starts each error sentence (file, line, row and field).
 */
export function datasetMediaCell(schema: z.ZodType, cell: unknown, folder: string, where: string, fromText: boolean): unknown {
  const base = unwrapped(schema);
  const kind = mediaKind(base);
  if (kind !== undefined) return load(kind, folder, cell, where, fromText);
  const def = base._zod.def as { type: string; element?: z.ZodType };
  const elementKind = def.type === "array" && def.element !== undefined ? mediaKind(unwrapped(def.element)) : undefined;
  if (elementKind === undefined) return undefined;
  if (!Array.isArray(cell)) throw new ValidationError(`${where}: expected a list of {"file": "<path>"} values; received ${JSON.stringify(cell)}`, { field: where });
  return cell.map((c, i) => load(elementKind, folder, c, `${where}[${i}]`, false));
}
