// A lab store for the review queue's tests: one evaluation run judged by "correct" (4 rows, one whose
// input holds text that would run as script if a page took it as HTML), an older evaluation run, and
// an optimization (whose rows a review cannot name). Plus a request helper that sets any header (Host,
// Origin), which fetch does not allow.
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore, type Lab } from "../../lib/store/lab-store.js";
import type { EvaluationRow } from "../../lib/store/records.js";

export const HOSTILE_INPUT = `<script>window.__pwned = 1</script>`;

export function judgedRow(index: number, correct: number, over: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    index, exampleId: `q-${index}`, inputs: { question: `question ${index}` }, expected: { answer: `answer ${index}` },
    prediction: { answer: index % 2 === 0 ? `answer ${index}` : `wrong ${index}` }, scores: { correct },
    details: { correct: { verdict: correct === 1 ? "pass" : "fail", rationale: `r${index}` } },
    error: null, durationMs: 5, inputTokens: 10, outputTokens: 2, cost: 0, ...over,
  };
}

/** Writes the fixture's runs into `lab`; returns their ids. */
export function fillReviewLab(lab: Lab): { judged: string; older: string; optimization: string } {
  const older = lab.startRun({ kind: "evaluation", name: "older", config: { metrics: ["correct"] } });
  lab.recordExample(older, judgedRow(0, 1));
  lab.finishRun(older, { status: "completed", score: 1, summary: {} });
  const optimization = lab.startRun({ kind: "optimization", name: "tune", config: {} });
  lab.finishRun(optimization, { status: "completed", score: 0.5, summary: {} });
  const judged = lab.startRun({ kind: "evaluation", name: "judged", config: { metrics: ["correct"] } });
  lab.recordExample(judged, judgedRow(0, 1, { inputs: { question: HOSTILE_INPUT } }));
  lab.recordExample(judged, judgedRow(1, 0));
  lab.recordExample(judged, judgedRow(2, 1));
  lab.recordExample(judged, judgedRow(3, 0));
  lab.finishRun(judged, { status: "completed", score: 0.5, summary: {} });
  return { judged, older, optimization };
}

/** A new lab store file with the fixture's runs. */
export function reviewLabFile(): { path: string; ids: ReturnType<typeof fillReviewLab> } {
  const path = join(mkdtempSync(join(tmpdir(), "typelm-review-")), "lab.sqlite");
  const ids = fillReviewLab(LabStore.open(path));
  return { path, ids };
}

/** A request with any headers, over a connection of its own; the answer's status, headers and body text. */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    // A header given as undefined is left out (a request without Origin).
    const headers = Object.fromEntries(Object.entries(options.headers ?? {}).filter(([, v]) => v !== undefined));
    const req = request(url, { method: options.method ?? "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}
