// Builds datasets/ from ../shared/datasets-raw (run once; the output is committed).
// poem-sentiment: every row of each split, ids kept from the source, labels as words.
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";

const raw = process.argv[2] ?? "../shared/datasets-raw";
const LABELS: Record<string, string> = { "-1": "negative", "0": "no_impact", "1": "positive", "2": "mixed" };

function poemSentiment(): void {
  const src = join(raw, "poem-sentiment");
  const out = "datasets/poem-sentiment";
  mkdirSync(out, { recursive: true });
  for (const split of ["train", "dev", "test"]) {
    const rows = readFileSync(join(src, `${split}.tsv`), "utf8").split("\n").filter((l) => l.trim() !== "").map((line) => {
      const [id, verse, label] = line.split("\t");
      const word = LABELS[label ?? ""];
      if (id === undefined || verse === undefined || word === undefined) throw new Error(`${split}.tsv: bad row ${JSON.stringify(line)}`);
      return JSON.stringify({ id: `${split}-${id}`, verse, label: word });
    });
    writeFileSync(join(out, `${split}.jsonl`), rows.join("\n") + "\n");
  }
  copyFileSync(join(src, "LICENSE"), join(out, "LICENSE"));
  const commit = readFileSync(join(src, "SOURCE_COMMIT"), "utf8").trim();
  writeFileSync(join(out, "ATTRIBUTION.md"), `# poem-sentiment

Source: google-research-datasets/poem-sentiment, \`data/\`, commit ${commit}.
Licence: CC BY 4.0 (see LICENSE). Cite: Emily Sheng and David Uthus, "Investigating Societal Biases
in a Poetry Composition System" (2020).

Built by \`scripts/build-datasets.ts\`: every row of train (892), dev (105) and test (104), one JSON
object a line: \`id\` (\`<split>-<source id>\`, stable), \`verse\`, \`label\` — the source's -1, 0, 1, 2
written as \`negative\`, \`no_impact\`, \`positive\`, \`mixed\` (dev and test have no \`mixed\`).
`);
}

poemSentiment();
