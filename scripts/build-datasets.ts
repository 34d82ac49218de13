// Builds datasets/ from ../shared/datasets-raw (`npm run build:datasets [raw folder]`); the output is
// committed. Every choice is deterministic: rows are picked by ranking sha256(`${SEED}\n${key}`), so
// a rebuild from the same sources gives byte-identical files (the hashes in each ATTRIBUTION.md).
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const raw = process.argv[2] ?? "../shared/datasets-raw";
if (!existsSync(join(raw, "poem-sentiment"))) {
  process.stderr.write(
    `build-datasets: the raw folder ${resolve(raw)} does not hold the sources (expected poem-sentiment/, banking77/, gsm8k/, restaurant8k/ and squality/ as published). ` +
      "Give the folder as an argument: npm run build:datasets -- <raw folder>\n",
  );
  process.exit(1);
}
const SEED = "typelm-datasets-1";

type Row = Record<string, unknown> & { id: string };
type Splits = Record<"train" | "dev" | "test", Row[]>;

/** The task signature written as signature.json (read back by lib/lab/dataset/load.ts). */
interface SignatureSpec {
  name: string;
  description: string;
  input: Record<string, FieldSpec>;
  output: Record<string, FieldSpec>;
}
interface FieldSpec {
  type: "string" | "number" | "enum" | "string[]";
  values?: string[];
  nullable?: boolean;
  description?: string;
}

interface Source {
  folder: string;
  repository: string;
  path: string;
  licence: string;
  citation: string;
  /** What the licence covers, when more needs saying than its name (a paragraph under "Licence"). */
  licenceNote?: string;
}

function rank(key: string): string {
  return createHash("sha256").update(`${SEED}\n${key}`).digest("hex");
}

/** The items ordered by rank (smallest first). */
function ranked<T>(items: T[], key: (item: T) => string): T[] {
  const keyed = items.map((item, index) => ({ item, index, r: rank(key(item)) }));
  keyed.sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0));
  return keyed.map((x) => x.item);
}

/** The `count` items with the smallest rank, returned in source order. */
function pick<T>(items: T[], count: number, key: (item: T) => string): T[] {
  const chosen = new Set(ranked(items, key).slice(0, count));
  return items.filter((item) => chosen.has(item));
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function jsonl(rows: Row[]): string {
  return rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

function withIds<T extends Record<string, unknown>>(split: string, rows: T[]): Row[] {
  return rows.map((r, i) => ({ id: `${split}-${i}`, ...r }));
}

function write(name: string, source: Source, splits: Splits, signature: SignatureSpec, how: string): void {
  const src = join(raw, source.folder);
  const out = join("datasets", name);
  mkdirSync(out, { recursive: true });
  const hashes: string[] = [];
  for (const split of ["train", "dev", "test"] as const) {
    const text = jsonl(splits[split]);
    writeFileSync(join(out, `${split}.jsonl`), text);
    hashes.push(`| ${split}.jsonl | ${splits[split].length} | \`${sha256(text)}\` |`);
  }
  writeFileSync(join(out, "signature.json"), JSON.stringify(signature, null, 2) + "\n");
  copyFileSync(join(src, "LICENSE"), join(out, "LICENSE"));
  const commit = readFileSync(join(src, "SOURCE_COMMIT"), "utf8").trim();
  writeFileSync(join(out, "ATTRIBUTION.md"), `# ${name}

- Source: [${source.repository}](https://github.com/${source.repository}), \`${source.path}\`, commit \`${commit}\`.
- Licence: ${source.licence} (see LICENSE, copied from the source).
- Cite: ${source.citation}
${source.licenceNote === undefined ? "" : `\n## Licence\n\n${source.licenceNote}\n`}
## How this copy was made

Built by \`scripts/build-datasets.ts\` (\`npm run build:datasets\`). ${how}

Ids are \`<split>-<n>\` (n counts from 0 in file order) and stay the same on every rebuild. Where rows
are sampled, the sample takes the rows with the smallest \`sha256("${SEED}\\n" + key)\` (hex order),
kept in source order; the key of each row is said above.

## Files

| file | rows | sha256 |
|---|---|---|
${hashes.join("\n")}

\`signature.json\` is the task signature \`loadDataset\` builds.
`);
}

// ---- poem-sentiment: every row ---------------------------------------------------------------

const POEM_LABELS: Record<string, string> = { "-1": "negative", "0": "no_impact", "1": "positive", "2": "mixed" };

function poemSentiment(): void {
  const src = join(raw, "poem-sentiment");
  const read = (split: string): Row[] => lines(join(src, `${split}.tsv`)).map((line, n) => {
    const [id, verse, label] = line.split("\t");
    const word = POEM_LABELS[label ?? ""];
    if (id === undefined || verse === undefined || word === undefined) throw new Error(`${split}.tsv line ${n + 1}: bad row ${JSON.stringify(line)}`);
    return { id: `${split}-${id}`, verse, label: word };
  });
  const splits = { train: read("train"), dev: read("dev"), test: read("test") };
  write("poem-sentiment", {
    folder: "poem-sentiment", repository: "google-research-datasets/poem-sentiment", path: "data/", licence: "CC BY 4.0",
    citation: 'Emily Sheng and David Uthus, "Investigating Societal Biases in a Poetry Composition System", GeBNLP workshop (2020).',
  }, splits, {
    name: "PoemSentiment",
    description: "Classify the sentiment a verse of poetry expresses.",
    input: { verse: { type: "string", description: "one verse (line) of a poem" } },
    output: { label: { type: "enum", values: ["negative", "no_impact", "positive", "mixed"], description: "the verse's sentiment" } },
  }, `Every row of the source's train (${splits.train.length}), dev (${splits.dev.length}) and test (${splits.test.length}) files, in source order, one JSON object a line: \`id\` (\`<split>-<source id>\`, the source's own id), \`verse\`, \`label\` — the source's -1, 0, 1, 2 written as \`negative\`, \`no_impact\`, \`positive\`, \`mixed\` (dev and test have no \`mixed\`).`);
}

function lines(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "");
}

// ---- banking77: 10 intents, stratified -------------------------------------------------------

const BANKING_INTENTS = 10;
const BANKING_PER_INTENT = { train: 20, dev: 5, test: 10 };

/** RFC 4180 CSV (quoted fields with commas and doubled quotes), as the source files are written. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") { row.push(field); field = ""; }
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field); field = "";
      if (row.some((f) => f !== "")) rows.push(row);
      row = [];
    } else field += ch;
  }
  if (field !== "" || row.length > 0) { row.push(field); rows.push(row); }
  return rows;
}

function banking77(): void {
  const src = join(raw, "banking77");
  const categories = JSON.parse(readFileSync(join(src, "categories.json"), "utf8")) as string[];
  const intents = pick(categories, BANKING_INTENTS, (c) => `intent:${c}`).sort();
  const read = (file: string) => {
    const [header, ...rows] = parseCsv(readFileSync(join(src, file), "utf8"));
    if (header?.join(",") !== "text,category") throw new Error(`${file}: expected the header text,category`);
    return rows.map((r, line) => ({ text: r[0]!, intent: r[1]!, line: line + 2 }));
  };
  const train = read("train.csv");
  const test = read("test.csv");
  const splits: Splits = { train: [], dev: [], test: [] };
  const chosen = { train: [] as typeof train, dev: [] as typeof train, test: [] as typeof test };
  for (const intent of intents) {
    const order = ranked(train.filter((r) => r.intent === intent), (r) => `train.csv:${r.line}`);
    chosen.train.push(...order.slice(0, BANKING_PER_INTENT.train));
    chosen.dev.push(...order.slice(BANKING_PER_INTENT.train, BANKING_PER_INTENT.train + BANKING_PER_INTENT.dev));
    chosen.test.push(...pick(test.filter((r) => r.intent === intent), BANKING_PER_INTENT.test, (r) => `test.csv:${r.line}`));
  }
  for (const split of ["train", "dev", "test"] as const) {
    const file = split === "test" ? "test.csv" : "train.csv";
    splits[split] = withIds(split, chosen[split].sort((a, b) => a.line - b.line).map((r) => ({ text: r.text, intent: r.intent, source: `${file}:${r.line}` })));
  }
  write("banking77", {
    folder: "banking77", repository: "PolyAI-LDN/task-specific-datasets", path: "banking_data/", licence: "CC BY 4.0",
    citation: 'Iñigo Casanueva, Tadas Temčinas, Daniela Gerz, Matthew Henderson and Ivan Vulić, "Efficient Intent Detection with Dual Sentence Encoders", NLP4ConvAI workshop (2020).',
  }, splits, {
    name: "BankingIntent",
    description: "Classify the intent of a bank customer's message.",
    input: { text: { type: "string", description: "the customer's message" } },
    output: { intent: { type: "enum", values: intents, description: "what the customer wants" } },
  }, `A stratified sample of ${BANKING_INTENTS} of the 77 intents. The intents are the ${BANKING_INTENTS} names in \`categories.json\` with the smallest rank (key \`intent:<name>\`): ${intents.map((i) => `\`${i}\``).join(", ")}. For each intent, the rows of \`train.csv\` with that intent are ranked (key \`train.csv:<line>\`, the 1-based line in the file, header = line 1). The first ${BANKING_PER_INTENT.train} go to train and the next ${BANKING_PER_INTENT.dev} to dev, so dev is disjoint from train. The ${BANKING_PER_INTENT.test} first-ranked rows of \`test.csv\` (key \`test.csv:<line>\`) go to test. Each split is in source line order. Fields: \`id\`, \`text\`, \`intent\`, \`source\` (file:line).`);
}

// ---- gsm8k: a fixed subset, answers as numbers -----------------------------------------------

const GSM8K_SIZES = { train: 200, dev: 50, test: 100 };

function gsm8k(): void {
  const src = join(raw, "gsm8k");
  const read = (file: string) => lines(join(src, file)).map((line, n) => {
    const r = JSON.parse(line) as { question: string; answer: string };
    const cut = r.answer.lastIndexOf("####");
    const answer = Number(r.answer.slice(cut + 4).trim().replace(/,/g, ""));
    if (cut < 0 || !Number.isFinite(answer)) throw new Error(`${file} line ${n + 1}: no number after ####`);
    const rationale = r.answer.slice(0, cut).replace(/<<[^>]*>>/g, "").trim();
    return { question: r.question, answer, rationale, line: n + 1 };
  });
  const train = read("train.jsonl");
  const ranked = pick(train, GSM8K_SIZES.train + GSM8K_SIZES.dev, (r) => `train.jsonl:${r.line}`);
  const devLines = new Set(pick(ranked, GSM8K_SIZES.dev, (r) => `dev:train.jsonl:${r.line}`).map((r) => r.line));
  const shape = (file: string) => (r: ReturnType<typeof read>[number]) => ({ question: r.question, answer: r.answer, rationale: r.rationale, source: `${file}:${r.line}` });
  const splits: Splits = {
    train: withIds("train", ranked.filter((r) => !devLines.has(r.line)).map(shape("train.jsonl"))),
    dev: withIds("dev", ranked.filter((r) => devLines.has(r.line)).map(shape("train.jsonl"))),
    test: withIds("test", pick(read("test.jsonl"), GSM8K_SIZES.test, (r) => `test.jsonl:${r.line}`).map(shape("test.jsonl"))),
  };
  write("gsm8k", {
    folder: "gsm8k", repository: "openai/grade-school-math", path: "grade_school_math/data/", licence: "MIT",
    citation: 'Karl Cobbe, Vineet Kosaraju, Mohammad Bavarian et al., "Training Verifiers to Solve Math Word Problems", arXiv:2110.14168 (2021).',
  }, splits, {
    name: "MathWordProblem",
    description: "Solve the grade-school math word problem and give the final number.",
    input: { question: { type: "string", description: "the word problem" } },
    output: { answer: { type: "number", description: "the final numeric answer" } },
  }, `From \`train.jsonl\`, the ${GSM8K_SIZES.train + GSM8K_SIZES.dev} first-ranked problems (key \`train.jsonl:<line>\`, 1-based); of those, the ${GSM8K_SIZES.dev} first-ranked by key \`dev:train.jsonl:<line>\` form dev and the other ${GSM8K_SIZES.train} train. From \`test.jsonl\`, the ${GSM8K_SIZES.test} first-ranked (key \`test.jsonl:<line>\`) form test. Fields: \`id\`, \`question\`, \`answer\` — the number after \`####\` with thousands commas removed, as a JSON number — \`rationale\` (the worked solution before \`####\`, with the \`<<…>>\` calculator annotations removed; not part of the signature, kept for demos with reasoning), \`source\` (file:line).`);
}

// ---- restaurant8k: a fixed subset, slots from character spans --------------------------------

const SLOTS = ["people", "date", "time", "first_name", "last_name"] as const;
const RESTAURANT_SIZES = { train: 200, test: 200 };

interface RestaurantRaw {
  userInput: { text: string };
  context?: { requestedSlots?: string[] };
  labels?: { slot: string; valueSpan: { startIndex?: number; endIndex: number } }[];
}

function restaurant8k(): void {
  const src = join(raw, "restaurant8k");
  const read = (file: string) => (JSON.parse(readFileSync(join(src, file), "utf8")) as RestaurantRaw[]).map((r, index) => {
    const slots: Record<string, string | null> = Object.fromEntries(SLOTS.map((s) => [s, null]));
    for (const label of r.labels ?? []) {
      if (!(SLOTS as readonly string[]).includes(label.slot)) throw new Error(`${file}[${index}]: unknown slot ${label.slot}`);
      // The source's protobuf JSON leaves out a start of 0.
      const value = r.userInput.text.slice(label.valueSpan.startIndex ?? 0, label.valueSpan.endIndex);
      if (slots[label.slot] !== null) throw new Error(`${file}[${index}]: slot ${label.slot} given twice`);
      slots[label.slot] = value;
    }
    return { utterance: r.userInput.text, requested_slots: r.context?.requestedSlots ?? [], ...slots, index };
  });
  const train = read("train_5.json");
  const trainPick = pick(train, RESTAURANT_SIZES.train, (r) => `train_5.json:${r.index}`);
  const chosen = new Set(trainPick.map((r) => r.index));
  const shape = (file: string) => ({ index, ...r }: ReturnType<typeof read>[number]) => ({ ...r, source: `${file}[${index}]` });
  const splits: Splits = {
    train: withIds("train", trainPick.map(shape("train_5.json"))),
    dev: withIds("dev", train.filter((r) => !chosen.has(r.index)).map(shape("train_5.json"))),
    test: withIds("test", pick(read("test.json"), RESTAURANT_SIZES.test, (r) => `test.json:${r.index}`).map(shape("test.json"))),
  };
  const slot = (description: string): FieldSpec => ({ type: "string", nullable: true, description });
  write("restaurant8k", {
    folder: "restaurant8k", repository: "PolyAI-LDN/task-specific-datasets", path: "span_extraction/restaurant8k/", licence: "CC BY 4.0",
    citation: 'Samuel Coope, Tyler Farghly, Daniela Gerz, Ivan Vulić and Matthew Henderson, "Span-ConveRT: Few-shot Span Extraction for Dialog with Pretrained Conversational Representations", ACL (2020).',
  }, splits, {
    name: "RestaurantBooking",
    description: "Extract the booking details the message gives, copying the words as written; null for what it does not give.",
    input: {
      utterance: { type: "string", description: "the customer's message" },
      requested_slots: { type: "string[]", description: "the details the assistant had just asked for (may be empty)" },
    },
    output: {
      people: slot("how many people, as written"), date: slot("the date, as written"), time: slot("the time, as written"),
      first_name: slot("the customer's first name"), last_name: slot("the customer's last name"),
    },
  }, `From \`train_5.json\` (256 utterances), the ${RESTAURANT_SIZES.train} first-ranked (key \`train_5.json:<index>\`, 0-based position in the array) form train and the other ${train.length - RESTAURANT_SIZES.train} dev. From \`test.json\`, the ${RESTAURANT_SIZES.test} first-ranked (key \`test.json:<index>\`) form test. Each slot (\`people\`, \`date\`, \`time\`, \`first_name\`, \`last_name\`) is the text between the label's character offsets \`startIndex\` (absent in the source = 0) and \`endIndex\`, or null when the utterance has no label for it; \`requested_slots\` is \`context.requestedSlots\` or []. Fields: \`id\`, \`utterance\`, \`requested_slots\`, the five slots, \`source\` (file[index]).`);
}

// ---- squality-ratings: people's ratings of summaries, as pass/fail verdicts ------------------

const SQUALITY_PASSAGES = { train: 8, dev: 4, test: 8 };
const SQUALITY_SYSTEMS = ["bart", "bart-dpr", "human"] as const;
/** A summary passes when the three reviewers' mean correctness rating (0–100) is at least this. */
const SQUALITY_PASS = 50;

interface SqualityRating {
  "passage-id": string;
  questions: Record<string, Record<string, {
    response: string;
    reviews: { worker_id: string; "correctness-rating": number }[];
    overall: { "correctness-rating": number };
  }>>;
}
interface SqualityStory {
  metadata: { passage_id: string };
  questions: { question_text: string; responses: { response_text: string }[] }[];
}

function squality(): void {
  const src = join(raw, "squality");
  const stories = new Map(lines(join(src, "test.jsonl")).map((line) => {
    const story = JSON.parse(line) as SqualityStory;
    return [story.metadata.passage_id, story] as const;
  }));
  const rated = lines(join(src, "all-responses.jsonl")).map((line, n) => {
    const r = JSON.parse(line) as SqualityRating;
    const story = stories.get(String(r["passage-id"]));
    if (story === undefined) throw new Error(`all-responses.jsonl line ${n + 1}: passage ${r["passage-id"]} is not in test.jsonl`);
    const rows = Object.keys(r.questions).sort((a, b) => Number(a) - Number(b)).flatMap((q) => {
      const question = story.questions[Number(q)];
      const systems = r.questions[q]!;
      if (question === undefined) throw new Error(`all-responses.jsonl line ${n + 1}: passage ${r["passage-id"]} has no question ${q} in test.jsonl`);
      const people = question.responses.map((x) => x.response_text);
      // The rated human summary is one of the question's four; the reference is the first of the other three.
      const judgedHuman = systems["human"]?.response;
      if (judgedHuman === undefined || !people.includes(judgedHuman)) {
        throw new Error(`all-responses.jsonl line ${n + 1}: question ${q}'s rated human summary is not one of test.jsonl's responses`);
      }
      const reference = people.find((p) => p !== judgedHuman)!;
      return SQUALITY_SYSTEMS.map((system) => {
        const one = systems[system];
        if (one === undefined) throw new Error(`all-responses.jsonl line ${n + 1}: question ${q} has no ${system} summary`);
        const correctness = one.overall["correctness-rating"];
        return {
          question: question.question_text, summary: one.response, reference,
          verdict: correctness >= SQUALITY_PASS ? "pass" : "fail",
          correctness, ratings: one.reviews.map((x) => x["correctness-rating"]), system,
          source: `all-responses.jsonl:${n + 1} passage ${r["passage-id"]} question ${q} ${system}`,
        };
      });
    });
    return { passage: String(r["passage-id"]), line: n + 1, rows };
  });
  const order = ranked(rated, (p) => `passage:${p.passage}`);
  const cut1 = SQUALITY_PASSAGES.train;
  const cut2 = cut1 + SQUALITY_PASSAGES.dev;
  const take = (split: "train" | "dev" | "test", from: number, to: number) => {
    const chosen = new Set(order.slice(from, to));
    return withIds(split, rated.filter((p) => chosen.has(p)).flatMap((p) => p.rows));
  };
  if (order.length !== cut2 + SQUALITY_PASSAGES.test) throw new Error(`all-responses.jsonl: expected ${cut2 + SQUALITY_PASSAGES.test} passages, found ${order.length}`);
  const splits: Splits = { train: take("train", 0, cut1), dev: take("dev", cut1, cut2), test: take("test", cut2, order.length) };
  const passes = (rows: Row[]) => rows.filter((r) => r["verdict"] === "pass").length;
  write("squality-ratings", {
    folder: "squality", repository: "nyu-mll/SQuALITY", path: "data/human-eval/all-responses.jsonl` and `data/v1-3/txt/test.jsonl", licence: "CC BY 4.0",
    citation: 'Alex Wang, Richard Yuanzhe Pang, Angelica Chen, Jason Phang and Samuel R. Bowman, "SQuALITY: Building a Long-Document Summarization Dataset the Hard Way", EMNLP (2022), arXiv:2205.11465.',
    licenceNote: "The source's `data/LICENSE` is the Creative Commons Attribution 4.0 International licence (copied here as LICENSE). " +
      "Its README says: \"The stories are distributed under the Project Gutenberg license and the summaries are distributed under a CC BY license, in `data/LICENSE`.\" " +
      "The human evaluation (`data/human-eval/`, the model summaries, the ratings) is in the same `data/` folder, with no other licence given. " +
      "This copy holds questions, summaries, references and ratings, and none of the stories' text, so the Project Gutenberg licence (`data/GUTENBERG_LICENSE`) does not apply to it. " +
      "Changes made: the ratings turned into pass/fail verdicts, the stories left out, the rows split by story (below).",
  }, splits, {
    name: "SummaryCorrectness",
    description: "Judge whether the summary answers the question about a story correctly, given a summary of the same story written by a person.",
    input: {
      question: { type: "string", description: "the question about the story the summary answers" },
      summary: { type: "string", description: "the summary judged (a model's or a person's)" },
      reference: { type: "string", description: "another person's answer to the same question, as the reference" },
    },
    output: { verdict: { type: "enum", values: ["pass", "fail"], description: "pass when people rated the summary's correctness at least 50 of 100" } },
  }, `Human judgements, not a model's: in the source's human evaluation three reviewers rated each of three summaries per question (the BART model's, the BART+DPR model's and a person's) for correctness, 0–100. Every rated summary is a row: 20 stories × 5 questions × 3 summaries. \`verdict\` is \`pass\` when the three reviewers' mean correctness rating (the source's \`overall.correctness-rating\`) is at least ${SQUALITY_PASS}, else \`fail\`; \`correctness\` is that mean and \`ratings\` the three reviewers' ratings, for other cut-offs. \`question\` is the question's text from \`data/v1-3/txt/test.jsonl\` (the source's evaluation keys questions by position); \`reference\` is the first, in source order, of the question's four human-written answers there that is not the rated human summary (the same reference for the three summaries of a question). The stories themselves (Project Gutenberg texts) are not copied. Splits are by story, so no story is in two splits: the stories are ranked (key \`passage:<Gutenberg id>\`); the first ${SQUALITY_PASSAGES.train} go to train, the next ${SQUALITY_PASSAGES.dev} to dev and the other ${SQUALITY_PASSAGES.test} to test, each in source order (per story its questions in order, per question \`bart\`, \`bart-dpr\`, \`human\`). Pass/fail rows: train ${passes(splits.train)}/${splits.train.length - passes(splits.train)}, dev ${passes(splits.dev)}/${splits.dev.length - passes(splits.dev)}, test ${passes(splits.test)}/${splits.test.length - passes(splits.test)}. Fields: \`id\`, \`question\`, \`summary\`, \`reference\`, \`verdict\`, \`correctness\`, \`ratings\`, \`system\`, \`source\` (file:line, story, question, system).`);
}

poemSentiment();
banking77();
gsm8k();
restaurant8k();
squality();
