// The page of an optimization run: the trials chart, the trials table, the lineage (GEPA's parents),
// and the candidates grouped by instruction: each distinct instruction (per predictor) is shown once,
// with the trials that used it (their kind, score and demos), as an optimizer tries one instruction
// with many demo sets. Every stored value is escaped text.
import type { RunSummary, Trial } from "../store/records.js";
import { trialsChart } from "./chart.js";
import { fields } from "./fields.js";
import { html, type Markup, num } from "./html.js";

/** Trials that ran with the same instructions (every predictor's), in the order first used. */
export interface InstructionGroup {
  instructions: Record<string, string>;
  trials: Trial[];
}

/** The trials grouped by their instructions (all predictors' texts equal), first use first. */
export function instructionGroups(trials: readonly Trial[]): InstructionGroup[] {
  const groups = new Map<string, InstructionGroup>();
  for (const t of trials) {
    const key = JSON.stringify(Object.entries(t.instructions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { instructions: t.instructions, trials: [] }));
    group.trials.push(t);
  }
  return [...groups.values()];
}

function bestOf(trials: readonly Trial[]): number | null {
  const scores = trials.map((t) => t.score).filter((s): s is number => s !== null);
  return scores.length === 0 ? null : Math.max(...scores);
}

function candidates(trials: readonly Trial[], returned: number | null): Markup {
  const groups = instructionGroups(trials);
  return html`<h2 id="instructions">Instructions (${groups.length} distinct in ${trials.length} trials)</h2>
${groups.map((g, i) => html`<section class="call" data-instruction="${i}"><div><b>instruction ${i + 1}</b> · used by ${g.trials.length} trial${g.trials.length === 1 ? "" : "s"} · best score ${num(bestOf(g.trials))}${g.trials.some((t) => t.index === returned) ? " · returned" : ""}</div>
${Object.entries(g.instructions).map(([path, text]) => html`<div class="role">${path} · instruction</div><pre>${text}</pre>`)}
<table class="uses"><thead><tr><th>trial</th><th>kind</th><th>score</th><th>demos</th></tr></thead><tbody>
${g.trials.map((t) => html`<tr id="trial-${t.index}" data-trial-use="${t.index}"><td class="num">${t.index}${t.index === returned ? " *" : ""}</td><td>${t.kind}</td><td class="num">${num(t.score)}</td>
<td>${Object.entries(t.demoIds).map(([path, ids]) => html`<div>${path}: ${ids.length === 0 ? "none" : ids.join(", ")}</div>`)}</td></tr>`)}
</tbody></table></section>`)}`;
}

/** `/runs/<id>` of an optimization: the chart, the trials, the lineage, each distinct instruction with the trials that used it. */
export async function optimizationPage(run: RunSummary & { bestTrial: number | null }, trials: Trial[], header: Markup): Promise<Markup> {
  const chart = await trialsChart(trials, run.bestTrial);
  const onTraining = (run.summary as { validation?: unknown }).validation === "training";
  const lineage = trials.filter((t) => t.parents.length > 0);
  return html`${header}
<p>${trials.length} trials${run.bestTrial === null ? "" : html`, returned trial <a href="#trial-${run.bestTrial}">${run.bestTrial}</a>`}.
Scores are on the ${onTraining ? "training" : "validation"} examples; the returned trial was chosen on them, so its score is optimistic.</p>
<h2>Scores</h2>${chart}
<h2>Trials</h2>
<table id="trials"><thead><tr><th>trial</th><th>kind</th><th>score</th><th>parents</th><th>reused</th><th>choices</th><th>LM calls</th><th>error</th></tr></thead><tbody>
${trials.map((t) => html`<tr data-trial="${t.index}"${t.index === run.bestTrial ? html` class="best"` : ""}><td class="num"><a href="#trial-${t.index}">${t.index}${t.index === run.bestTrial ? " *" : ""}</a></td>
<td>${t.kind}</td><td class="num">${num(t.score)}</td><td>${t.parents.join(", ")}</td><td class="num">${t.reused}</td>
<td class="cell">${Object.keys(t.choices).length === 0 ? "" : fields(t.choices)}</td><td class="num">${t.lmCalls}</td><td class="cell">${t.error === null ? "" : fields(t.error)}</td></tr>`)}
</tbody></table>
${lineage.length === 0 ? "" : html`<h2>Lineage</h2><ul id="lineage">${lineage.map((t) => html`<li data-lineage="${t.index}">trial ${t.index} (${t.kind}, ${num(t.score)}) ← ${t.parents.map((p, i) => html`${i > 0 ? ", " : ""}<a href="#trial-${p}">trial ${p}</a>`)}</li>`)}</ul>`}
${candidates(trials, run.bestTrial)}`;
}
