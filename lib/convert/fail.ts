import { OutputError, preview } from "../errors.js";

/** Converts one reply value at `path`; throws OutputError. `raw` is only carried into errors. */
export type Converter = (value: unknown, path: string, raw: string) => unknown;

/** Throws the OutputError every converter raises: where, what was expected, what came. */
export function fail(path: string, expected: string, received: unknown, raw: string, detail?: string): never {
  const where = path === "" ? "Output" : `Output field "${path}"`;
  const extra = detail === undefined ? "" : ` (${detail})`;
  throw new OutputError(`${where}: expected ${expected}, received ${preview(received)}${extra}`, {
    raw,
    path,
    expected,
    received,
  });
}
