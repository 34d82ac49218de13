import { afterEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Judge, LabStore, Predict, Signature, resetConfiguration } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { startViewer } from "../../lib/view/server.js";

class Capital extends Signature {
  static override input = { country: z.string() };
  static override output = { answer: z.string() };
}

afterEach(() => resetConfiguration());

const HOSTILE = `<script>window.__pwned = 1</script>`;

describe("a judge's verdict and rationale are kept with the recorded run", () => {
  it("each stored row holds what the judge said; rows it said nothing of have no details; the viewer shows it as text", async () => {
    const lab = LabStore.open(join(mkdtempSync(join(tmpdir(), "typelm-judge-stored-")), "lab.sqlite"));
    const program = new Predict(Capital).configure((c) => {
      c.lm = new ScriptedLM((req) => ({ answer: String(req.inputs?.["country"]).endsWith("1") ? "Nowhere" : "Paris" }));
    });
    // The judge's rationale quotes the answer, hostile text included for example 2.
    const judgeLM = new ScriptedLM((req) => {
      const answer = (req.inputs?.["answer"] as { answer: string }).answer;
      const country = String((req.inputs?.["inputs"] as { country?: string } | undefined)?.country ?? "");
      return { rationale: `said ${answer}${country.endsWith("2") ? ` ${HOSTILE}` : ""}`, verdict: answer === "Paris" ? "pass" : "fail" };
    });
    const judge = new Judge({ name: "correct", criteria: "The answer is Paris.", lm: judgeLM });
    const testExamples = [0, 1, 2].map((n) => new FewShotExample({ id: `ex-${n}`, input: { country: `country ${n}` }, output: { answer: "Paris" } }));
    const report = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: program, testExamples, metrics: [judge, "accuracy"] });

    const stored = lab.run(report.runId!);
    expect(stored?.kind).toBe("evaluation");
    const rows = stored!.kind === "evaluation" ? stored!.rows : [];
    expect(rows.map((r) => r.details?.["correct"]?.["verdict"])).toEqual(["pass", "fail", "pass"]);
    expect(rows[1]!.details).toEqual({ correct: { verdict: "fail", rationale: "said Nowhere" } });
    expect(rows.map((r) => r.details)).toEqual(report.results.map((r) => r.details));

    // Without a judge, a stored row has no details at all.
    const plain = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: program, testExamples, metrics: ["accuracy"] });
    const plainRun = lab.run(plain.runId!);
    expect(plainRun!.kind === "evaluation" && plainRun!.rows.every((r) => !("details" in r))).toBe(true);

    // The viewer's example page shows the verdict and the rationale, the hostile text as text.
    const viewer = await startViewer({ store: lab.path, port: 0 });
    try {
      const html = await (await fetch(`${viewer.url}runs/${report.runId}/rows/2`)).text();
      expect(html).toContain(`<tr data-details="correct"><td>correct</td><td><span class="v">pass</span></td>`);
      expect(html).toContain("said Paris &lt;script&gt;window.__pwned = 1&lt;/script&gt;");
      expect(html).not.toContain(HOSTILE);
    } finally {
      await viewer.close();
    }
  });
});
