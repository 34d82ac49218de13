import { isAbsolute, relative } from "node:path";
import { LabStore, labFromConfig } from "../store/lab-store.js";
import type { RegistryVersion, RunSummary } from "../store/records.js";
import { show, type MimeBundle } from "./bundle.js";
import { formatNumber, htmlTable, textTable } from "./html.js";

/** What `display.runs` reads: `LabStore` (either engine) satisfies it. */
export interface RunsSource {
  /** The runs to list, as summaries. */
  runs(): RunSummary[] | Promise<RunSummary[]>;
  /** The store's file, named in the caption (runs may sit in more than one store). */
  readonly path?: string;
}

/** What it reads from a registry: `Registry` satisfies it. */
export interface VersionsSource {
  /** The versions stored under `name`. */
  versions(name: string): RegistryVersion[] | Promise<RegistryVersion[]>;
}

/** Options of `display.runs`: a registry and the names whose versions to list, and how many runs to show. */
export interface RunsOptions {
  /** Also list the versions stored under these names. */
  registry?: VersionsSource;
  names?: readonly string[];
  /** Runs shown, newest first (default 30). */
  limit?: number;
}

function duration(run: RunSummary): string {
  if (!run.endedAt) return run.status === "running" ? "running" : "";
  const ms = Date.parse(run.endedAt) - Date.parse(run.startedAt);
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "";
}

/** A store file as the shorter of its absolute path and its path from the working directory (`../.typelm/lab.sqlite` from notebooks/). */
function storePath(path: string): string {
  if (!isAbsolute(path)) return path;
  const fromHere = relative(process.cwd(), path);
  return fromHere !== "" && fromHere.length < path.length ? fromHere : path;
}

/** The runs bundle: the lab store's runs (newest first) and, when asked, registry versions. */
export async function runsBundle(lab: RunsSource, options: RunsOptions = {}): Promise<MimeBundle> {
  const all = await lab.runs();
  const runs = all.slice(0, options.limit ?? 30);
  const headers = ["id", "kind", "name", "status", "score", "started", "duration", "error"];
  const rows = runs.map((r) => {
    const cells = [r.id, r.kind, r.name, r.status, formatNumber(r.score), r.startedAt, duration(r), r.error ?? ""];
    return r.status === "failed" ? cells.map((text) => ({ text, style: "background:#fdecea" })) : cells;
  });
  const where = typeof lab.path === "string" ? ` at ${storePath(lab.path)}` : "";
  const caption = `${all.length} run${all.length === 1 ? "" : "s"} in the lab store${where}${all.length > runs.length ? ` (newest ${runs.length} shown)` : ""}`;
  let html = htmlTable(headers, rows, caption);
  let text = `${caption}\n${textTable(headers, rows)}`;
  if (options.registry && options.names?.length) {
    const versions = (await Promise.all(options.names.map((n) => options.registry!.versions(n)))).flat();
    const vHeaders = ["name", "version", "score", "created", "metadata"];
    const vRows = versions.map((v) => [v.name, String(v.version), formatNumber(v.score), v.createdAt, JSON.stringify(v.metadata ?? {})]);
    html += htmlTable(vHeaders, vRows, `${versions.length} registry versions`);
    text += `\n\n${versions.length} registry versions\n${textTable(vHeaders, vRows)}`;
  }
  return { "text/html": html, "text/plain": text };
}

/**
 * Shows the lab store's runs (default: the configured store, `.typelm/lab.sqlite`) and, with
 * `{ registry, names }`, the registry versions under those names; returns the bundle outside a notebook.
 */
export async function displayRuns(lab?: RunsSource, options?: RunsOptions): Promise<MimeBundle | undefined> {
  return show(await runsBundle(lab ?? labFromConfig() ?? LabStore.open(), options));
}
