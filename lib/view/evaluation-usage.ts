// What an evaluation page says of the run's model use and origin: the program's tokens and cost and,
// apart from them, the judges' calls, tokens and cost (the totals an evaluation stores in its summary
// when it ends, `summary.judge`); the provider's prompt cache when the run used one (the cache-read
// share and what it saved, `summary.promptCache`); and, for a run `typelm rescore` made, a link to its source run.
import { promptCacheLine, type PromptCacheUsage } from "../evaluate/prompt-cache.js";
import type { RunSummary } from "../store/records.js";
import { html, type Markup, num } from "./html.js";

/** A number stored in a run's summary, or undefined. */
function stored(from: unknown, key: string): number | undefined {
  const v = (from as Record<string, unknown> | undefined)?.[key];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

const count = (v: number | undefined): string => (v === undefined ? "—" : String(v));

/** The source of a rescored run (`config.rescoredFrom`), linked; nothing for another run. */
export function sourceLink(run: RunSummary): Markup {
  const source = run.config["rescoredFrom"];
  if (typeof source !== "string") return html``;
  return html`<p id="rescored-from">Rescored from run <a href="/runs/${encodeURIComponent(source)}" data-run-id="${source}" data-source-run>${source}</a>: its stored predictions, judged again (the program was not called).</p>`;
}

/**
 * `#usage`: the program's tokens and cost, and the judges' calls, tokens and cost on their own line
 * (`tr[data-usage="program"]`, `tr[data-usage="judge"]`), as the run's summary recorded them.
 */
export function usageSection(run: RunSummary): Markup {
  const s = run.summary;
  const judge = s["judge"];
  if (stored(s, "inputTokens") === undefined && judge === undefined) {
    return html`<p class="muted" id="usage">${run.status === "running" ? "The program's and the judges' tokens and cost are recorded when the run ends." : "This run recorded no token or cost totals."}</p>`;
  }
  const rescored = typeof run.config["rescoredFrom"] === "string";
  return html`<h2>Model use</h2><table id="usage"><thead><tr><th></th><th>calls</th><th>input tokens</th><th>output tokens</th><th>cost (USD)</th></tr></thead><tbody>
<tr data-usage="program"><td>program${rescored ? " (not called: a rescore)" : ""}</td><td class="num">—</td><td class="num">${count(stored(s, "inputTokens"))}</td><td class="num">${count(stored(s, "outputTokens"))}</td><td class="num">${num(stored(s, "cost"), 4)}</td></tr>
${judge === undefined ? "" : html`<tr data-usage="judge"><td>judges</td><td class="num">${count(stored(judge, "calls"))}</td><td class="num">${count(stored(judge, "inputTokens"))}</td><td class="num">${count(stored(judge, "outputTokens"))}</td><td class="num">${num(stored(judge, "cost"), 4)}</td></tr>`}
</tbody></table>${promptCacheNote(s)}${judge === undefined ? "" : html`<p class="muted">The judges' calls are counted apart from the program's: the rows' tokens and cost are the program's only.</p>`}`;
}

/** `#prompt-cache`: the program's cache-read share of its input tokens and what the cache saved, as `typelm show` says it; nothing when the run used no prompt cache. */
function promptCacheNote(summary: Record<string, unknown>): Markup {
  const cache = summary["promptCache"] as PromptCacheUsage | undefined;
  const input = stored(summary, "inputTokens");
  if (input === undefined || stored(cache, "readTokens") === undefined || stored(cache, "writeTokens") === undefined ||
    stored(cache, "reasoningTokens") === undefined || stored(cache, "savings") === undefined) return html``;
  return html`<p id="prompt-cache">${promptCacheLine(cache!, input)}</p>`;
}
