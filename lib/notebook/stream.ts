/**
 * `display.stream(s)`: shows a prediction filling in as a stream runs, in place in a notebook (one
 * live display, updated by id through tslab's `update_display_data`). A row per output field of
 * each predictor (named by its path inside the module), its value as it grows, marked "writing" until
 * its `field` event arrives; agents' steps are counted with the last one shown. Redrawn at most every
 * `intervalMs` (and at each finished field, each step and the end), so a fast stream does not flood
 * the notebook. The helper iterates the stream itself: do not iterate it elsewhere too.
 */
import type { PredictionStream, StreamEvent } from "../stream/events.js";
import { liveDisplay, type MimeBundle } from "./bundle.js";
import { htmlTable, showValue, textTable } from "./html.js";

/** Options of `display.stream`. */
export interface StreamDisplayOptions {
  /** Least time between two redraws for partial output, in milliseconds (default 100). */
  intervalMs?: number;
}

interface Row {
  path: string;
  name: string;
  value: unknown;
  done: boolean;
}

/** What the display shows: the fields by path, the steps, and how the stream ended. */
class StreamView {
  private rows = new Map<string, Row>();
  private steps = new Map<string, { count: number; last: unknown }>();
  status = "streaming…";

  add(event: StreamEvent<any>): void {
    if (event.type === "step") {
      const s = this.steps.get(event.path) ?? { count: 0, last: undefined };
      this.steps.set(event.path, { count: s.count + 1, last: event.step });
    } else if (event.type === "field") {
      this.rows.set(`${event.path}\u0000${event.name}`, { path: event.path, name: event.name, value: event.value, done: true });
    } else {
      for (const [name, value] of Object.entries((event.partial ?? {}) as Record<string, unknown>)) {
        const key = `${event.path}\u0000${name}`;
        if (this.rows.get(key)?.done !== true) this.rows.set(key, { path: event.path, name, value, done: false });
      }
    }
  }

  bundle(): MimeBundle {
    const rows: string[][] = [];
    for (const [path, s] of this.steps) rows.push([path === "" ? "steps" : `${path} steps`, `${s.count} done`, showValue(s.last)]);
    for (const r of this.rows.values()) {
      rows.push([r.path === "" ? r.name : `${r.path}.${r.name}`, r.done ? "done" : "writing", showValue(r.value)]);
    }
    return {
      "text/html": htmlTable(["field", "state", "value"], rows, this.status),
      "text/plain": [this.status, textTable(["field", "state", "value"], rows)].join("\n"),
    };
  }
}

/**
 * Shows the stream's fields filling in, in place; resolves when the stream ends (after its last
 * redraw): with undefined in a notebook, with the final bundle elsewhere. A failed stream is shown
 * with its error, and the promise rejects with it.
 */
export async function displayStream(stream: PredictionStream<any, any>, options: StreamDisplayOptions = {}): Promise<MimeBundle | undefined> {
  const interval = options.intervalMs ?? 100;
  const live = liveDisplay();
  const view = new StreamView();
  let drawn = -Infinity;
  const draw = (force: boolean): void => {
    const now = Date.now();
    if (live === null || (!force && now - drawn < interval)) return;
    drawn = now;
    live.update(view.bundle());
  };
  draw(true);
  try {
    for await (const event of stream) {
      view.add(event);
      draw(event.type !== "partial");
    }
    view.status = "done";
  } catch (error) {
    view.status = `failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    draw(true);
    throw error;
  }
  draw(true);
  return live === null ? view.bundle() : undefined;
}
