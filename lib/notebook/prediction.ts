import { Prediction } from "../predict/prediction.js";
import { show, type MimeBundle } from "./bundle.js";
import { htmlTable, showValue, textTable } from "./html.js";
import { expectObject } from "./input.js";
import { isMediaCell, mediaHtml, mediaText } from "./media.js";

/** Output fields of a prediction, `reasoning` first (it explains the rest); an agent's history is left to `display.trace`. */
export function predictionFields(prediction: object): [string, unknown][] {
  const values = typeof (prediction as { toJSON?: unknown }).toJSON === "function"
    ? ((prediction as { toJSON(): Record<string, unknown> }).toJSON())
    : { ...(prediction as Record<string, unknown>) };
  const entries = Object.entries(values).filter(([k]) => k !== "history");
  return entries.sort(([a], [b]) => Number(b === "reasoning") - Number(a === "reasoning"));
}

/** The bundle for one prediction: its fields, and how it was made (model, tokens, cache) when known. */
export function predictionBundle(prediction: object): MimeBundle {
  expectObject(prediction, "display.prediction", "a prediction (what a predictor's call returned)");
  const rows = predictionFields(prediction).map(([k, v]) => [k, isMediaCell(v) ? { text: mediaText(v), html: mediaHtml(v) } : showValue(v)]);
  const meta = Prediction.meta(prediction);
  const caption = meta
    ? `${meta.model} · ${meta.usage.inputTokens} in / ${meta.usage.outputTokens} out tokens${meta.cached ? " · cached" : ""}`
    : undefined;
  const steps = (prediction as { history?: unknown }).history;
  const note = Array.isArray(steps) ? `${steps.length} agent steps (display.trace shows them)` : undefined;
  const html = htmlTable(["field", "value"], rows, caption) + (note ? `<div style="font:12px sans-serif;color:#666">${note}</div>` : "");
  const text = [caption, textTable(["field", "value"], rows), note].filter(Boolean).join("\n");
  return { "text/html": html, "text/plain": text };
}

/** Shows a prediction's fields in a notebook; returns the bundle outside one. */
export function displayPrediction(prediction: object): MimeBundle | undefined {
  return show(predictionBundle(prediction));
}
