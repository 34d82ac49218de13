// The pages of a comparison of two evaluations and of the registry (values shown as fields).
import type { Comparison } from "../evaluate/compare.js";
import type { EvaluationRow, RunSummary } from "../store/records.js";
import { fields } from "./fields.js";
import { html, Markup, num } from "./html.js";
import { models } from "./pages.js";
import type { ViewVersion } from "./data/queries.js";

function predictionFields(row: EvaluationRow | undefined): Markup {
  if (row === undefined) return html`—`;
  if (row.error !== null) return html`<span class="worse">failed:</span> ${fields(row.error)}`;
  return fields(row.prediction);
}

/** `/compare/<a>/<b>`: each shared metric paired by example, then the examples that changed side by side. */
export function comparePage(a: RunSummary, b: RunSummary, comparisons: (Comparison & { pAdjusted: number })[], rowsA: Map<string, EvaluationRow>, rowsB: Map<string, EvaluationRow>, pText: (p: number) => string): Markup {
  const first = comparisons[0]!;
  const changed = [...first.better.map((id) => ["better", id] as const), ...first.worse.map((id) => ["worse", id] as const)];
  const shown = changed.slice(0, 200);
  const score = (r: EvaluationRow | undefined) => num(r?.scores[first.metric], 2);
  const runLink = (r: RunSummary, which: string) => html`<p>${which}: <a href="/runs/${encodeURIComponent(r.id)}" data-run-id="${r.id}">${r.name}</a> <code>${r.id}</code>${models(r) === "" ? "" : html` · ${models(r)}`}</p>`;
  return html`<h1>Comparison</h1>${runLink(a, "A")}${runLink(b, "B")}
<p>${first.n} examples paired by id. Difference is B − A.</p>
<table id="comparison"><thead><tr><th>metric</th><th>A</th><th>B</th><th>difference</th><th>${Number((first.confidence * 100).toPrecision(6))}% CI</th><th>interval</th><th>p-value</th><th>p (Holm)</th><th>test</th><th>verdict</th><th>mde (80% power)</th></tr></thead><tbody>
${comparisons.map((c, i) => html`<tr><td>${c.metric}${i === 0 && comparisons.length > 1 ? " (primary)" : ""}</td><td class="num">${num(c.a)}</td><td class="num">${num(c.b)}</td>
<td class="num" data-metric="${c.metric}">${signedText(c.diff)}</td><td class="num">${signedText(c.ci[0])} to ${signedText(c.ci[1])}</td><td>${c.ciMethod}</td>
<td class="num">${pText(c.pValue)}</td><td class="num">${pText(c.pAdjusted)}</td><td>${c.test}</td>
<td class="${c.significant ? (c.diff > 0 ? "better" : "worse") : "muted"}">${c.significant ? "significant" : "not significant"}</td><td class="num">${c.significant ? "" : c.mde === null ? "none" : num(c.mde)}</td></tr>`)}
</tbody></table>
<h2>${changed.length === 0 ? `No example changed on ${first.metric}` : `Examples that changed on ${first.metric}: ${first.better.length} better, ${first.worse.length} worse`}</h2>
${changed.length > shown.length ? html`<p class="muted">The first ${shown.length} are shown.</p>` : ""}
${shown.length === 0 ? "" : html`<table id="changed"><thead><tr><th></th><th>example</th><th>input</th><th>expected</th><th>A</th><th>B</th></tr></thead><tbody>
${shown.map(([how, id]) => {
    const ra = rowsA.get(id), rb = rowsB.get(id);
    return html`<tr data-example-id="${id}" class="${how}"><td class="${how}">${how === "better" ? "+" : "−"} ${score(ra)} → ${score(rb)}</td>
<td>${ra === undefined ? id : html`<a href="/runs/${encodeURIComponent(a.id)}/rows/${ra.index}">${id}</a>`}</td><td class="cell">${fields(ra?.inputs)}</td>
<td class="cell">${fields(ra?.expected)}</td><td class="cell">${predictionFields(ra)}</td><td class="cell">${predictionFields(rb)}</td></tr>`;
  })}</tbody></table>`}`;
}

function signedText(v: number): string {
  return `${v > 0 ? "+" : v < 0 ? "−" : ""}${Math.abs(v).toFixed(3)}`;
}

/** `/registry`: every stored module name with its versions. */
export function registryPage(names: { name: string; versions: number; latest: number; score: number | null; createdAt: string }[]): Markup {
  return html`<h1>Registry</h1>${names.length === 0 ? html`<p class="muted">No module stored in this store's registry.</p>` : html`
<table id="registry"><thead><tr><th>name</th><th>versions</th><th>latest</th><th>score</th><th>stored</th></tr></thead><tbody>
${names.map((n) => html`<tr data-name="${n.name}"><td><a href="/registry/${encodeURIComponent(n.name)}">${n.name}</a></td><td class="num">${n.versions}</td>
<td class="num">v${n.latest}</td><td class="num">${num(n.score)}</td><td>${n.createdAt}</td></tr>`)}</tbody></table>`}`;
}

/** Line-by-line difference of two texts (longest common subsequence; long texts compared as wholes). */
export function lineDiff(a: string, b: string): { kind: "same" | "del" | "ins"; text: string }[] {
  const x = a.split("\n"), y = b.split("\n");
  if (x.length * y.length > 250_000) return [...x.map((text) => ({ kind: "del" as const, text })), ...y.map((text) => ({ kind: "ins" as const, text }))];
  const lcs: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: { kind: "same" | "del" | "ins"; text: string }[] = [];
  let i = 0, j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) { out.push({ kind: "same", text: x[i]! }); i++; j++; }
    else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ kind: "del", text: x[i++]! });
    else out.push({ kind: "ins", text: y[j++]! });
  }
  while (i < x.length) out.push({ kind: "del", text: x[i++]! });
  while (j < y.length) out.push({ kind: "ins", text: y[j++]! });
  return out;
}

function demoKey(demo: unknown): string {
  const id = (demo as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : JSON.stringify(demo);
}

/** `/registry/<name>`: the versions with their scores, and the instruction and demo difference between two of them. */
export function registryNamePage(name: string, versions: ViewVersion[], a: ViewVersion | undefined, b: ViewVersion | undefined): Markup {
  const base = `/registry/${encodeURIComponent(name)}`;
  const paths = [...new Set([...Object.keys(a?.predictors ?? {}), ...Object.keys(b?.predictors ?? {})])];
  return html`<p><a href="/registry">← registry</a></p><h1>${name}</h1>
<table id="versions"><thead><tr><th>version</th><th>stored</th><th>score</th><th>class</th><th>metadata</th></tr></thead><tbody>
${versions.map((v) => html`<tr data-version="${v.version}"><td class="num">v${v.version}</td><td>${v.createdAt}</td><td class="num">${num(v.score)}</td><td>${v.moduleClass}</td><td class="cell">${fields(v.metadata)}</td></tr>`)}
</tbody></table>
${a === undefined || b === undefined ? "" : html`<h2>v${a.version} → v${b.version}</h2>
<form class="filters" method="get" action="${base}"><label>from<select name="a">${versions.map((v) => html`<option value="${v.version}"${new Markup(v.version === a.version ? " selected" : "")}>v${v.version}</option>`)}</select></label>
<label>to<select name="b">${versions.map((v) => html`<option value="${v.version}"${new Markup(v.version === b.version ? " selected" : "")}>v${v.version}</option>`)}</select></label><button type="submit">Compare</button></form>
${paths.map((path) => {
    const pa = a.predictors[path], pb = b.predictors[path];
    const demosA = new Map((pa?.demos ?? []).map((d) => [demoKey(d), d])), demosB = new Map((pb?.demos ?? []).map((d) => [demoKey(d), d]));
    const removed = [...demosA.keys()].filter((k) => !demosB.has(k)), added = [...demosB.keys()].filter((k) => !demosA.has(k));
    return html`<section class="call" data-predictor="${path}"><div class="role">${path} · instruction</div>
<pre class="diff">${lineDiff(pa?.instruction ?? "", pb?.instruction ?? "").map((l) => html`<span class="${l.kind}">${l.kind === "del" ? "- " : l.kind === "ins" ? "+ " : "  "}${l.text}\n</span>`)}</pre>
<div class="role">${path} · demos: ${demosB.size} in v${b.version}, ${added.length} added, ${removed.length} removed</div>
${removed.map((k) => html`<div class="block del" data-demo="removed">${fields(demosA.get(k))}</div>`)}${added.map((k) => html`<div class="block ins" data-demo="added">${fields(demosB.get(k))}</div>`)}</section>`;
  })}`}`;
}
