import { createRequire } from "node:module";

/**
 * One display: the same content in several MIME types; the viewer picks the richest it understands.
 * `text/html` and `text/plain` are always present; charts add vega-lite and a PNG (base64).
 */
export interface MimeBundle {
  "text/html": string;
  "text/plain": string;
  "application/vnd.vegalite.v5+json"?: Record<string, unknown>;
  "image/png"?: string;
}

interface DisplayMessage {
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  transient: { display_id?: string };
}
type WriteDisplayData = (message: DisplayMessage, update: boolean) => void;

const JUPYTER_MODULE = /[\\/]tslab[\\/]dist[\\/]jupyter\.js$/;

/**
 * tslab's writer of `display_data` for the cell being executed, or null outside a tslab kernel.
 * tslab's public `display.raw` sends one MIME type per message; a bundle needs its internal
 * `lastWriteDisplayData`, found in the CommonJS module cache (shared by every `require`) wherever
 * tslab is installed. It is reassigned for every executed cell, so it is looked up at each call.
 */
export function tslabWriter(): WriteDisplayData | null {
  const cache = createRequire(import.meta.url).cache;
  // The module's key is found once (the cache holds thousands of entries); its export is read each time.
  if (jupyterKey === undefined || !cache[jupyterKey]) jupyterKey = Object.keys(cache).find((key) => JUPYTER_MODULE.test(key));
  const write = jupyterKey === undefined ? undefined : (cache[jupyterKey]?.exports as { lastWriteDisplayData?: unknown } | undefined)?.lastWriteDisplayData;
  return typeof write === "function" ? (write as WriteDisplayData) : null;
}
let jupyterKey: string | undefined;

/** True inside a tslab kernel that is executing a cell. */
export function inNotebook(): boolean {
  return tslabWriter() !== null;
}

/**
 * Shows the bundle in the notebook (and returns undefined, so tslab does not also print it), or,
 * outside a notebook, returns it.
 */
export function show(bundle: MimeBundle): MimeBundle | undefined {
  const write = tslabWriter();
  if (!write) return bundle;
  write({ data: { ...bundle }, metadata: {}, transient: {} }, false);
  return undefined;
}

/** A display that is drawn once and then replaced in place (`update_display_data`). */
export interface LiveDisplay {
  update(bundle: MimeBundle): void;
}

/** A live display in the current cell, or null outside a notebook. */
export function liveDisplay(): LiveDisplay | null {
  if (!tslabWriter()) return null;
  const id = `typelm-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  let shown = false;
  return {
    update(bundle) {
      // Looked up again: the writer belongs to the cell that is executing now.
      const write = tslabWriter();
      if (!write) return;
      write({ data: { ...bundle }, metadata: {}, transient: { display_id: id } }, shown);
      shown = true;
    },
  };
}
