import { show, type MimeBundle } from "./bundle.js";
import { htmlTable, showValue, textTable } from "./html.js";
import { expectArray } from "./input.js";

/** An example as `FewShotExample` holds it (dataset rows and demos alike). */
export interface ExampleInput {
  id?: string | undefined;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

/** Options of `display.examples`: how many rows to show. */
export interface ExamplesOptions {
  /** Rows shown (default 20); the bundle says how many were left out. */
  limit?: number;
}

/** The examples bundle: one row per example, one column per input and output field. */
export function examplesBundle(examples: readonly ExampleInput[], options: ExamplesOptions = {}): MimeBundle {
  expectArray(examples, "display.examples", "an array of examples (FewShotExample[], a dataset split or a predictor's demos)");
  const limit = options.limit ?? 20;
  const shown = examples.slice(0, limit);
  const inputs = [...new Set(shown.flatMap((e) => Object.keys(e.input ?? {})))];
  const outputs = [...new Set(shown.flatMap((e) => Object.keys(e.output ?? {})))];
  const headers = ["id", ...inputs.map((k) => `input.${k}`), ...outputs.map((k) => `output.${k}`)];
  const rows = shown.map((e, i) => [
    e.id ?? `#${i}`,
    ...inputs.map((k) => showValue(e.input?.[k])),
    ...outputs.map((k) => showValue(e.output?.[k])),
  ]);
  const more = examples.length > shown.length ? `${examples.length - shown.length} more not shown (limit ${limit})` : "";
  const caption = `${examples.length} example${examples.length === 1 ? "" : "s"}`;
  return {
    "text/html": htmlTable(headers, rows, caption) + (more ? `<div style="font:12px sans-serif;color:#666">${more}</div>` : ""),
    "text/plain": [caption, textTable(headers, rows), more].filter(Boolean).join("\n"),
  };
}

/** Shows examples (a dataset split, a predictor's demos) as a table; returns the bundle outside a notebook. */
export function displayExamples(examples: readonly ExampleInput[], options?: ExamplesOptions): MimeBundle | undefined {
  return show(examplesBundle(examples, options));
}
