// The command line's usage text and its options: each command's part of the usage declares the options
// it takes; the parser's table; and what is wrong with a command line before it runs (a usage error).
import { parseArgs } from "node:util";
import { BUNDLED_EXPERIMENTS } from "../experiment/reproduce.js";
import { closest, UsageError } from "./usage.js";

/** The whole usage, as `typelm help` prints it; each command's part declares the options it takes. */
export const USAGE = `Usage:
  typelm run <experiment file> [--lm provider/model ...] [--limit N] [--seed N] [--no-cache] [--batch] [--out DIR]
             [--seeds N] [--baseline <results.json | run id> [--tolerance T] [--allow-underpowered] [--junit FILE]] [--watch]
      Runs an experiment file (TypeScript or JavaScript, default-exporting defineExperiment(...)) once
      per --lm and writes <DIR, default reports>/<name>/report.md and results.json.
      Model: --lm (repeat it to compare models), else TYPELM_LM, else a local Ollama that answers,
      else the offline stand-in (--lm simulated/stand-in chooses it by name). --batch sends the test
      evaluations through the provider's batch service (OpenAI, Anthropic) at half price.
      --seeds N runs the optimizer N times (seeds --seed ... --seed + N - 1) and reports each seed's
      test gain and their mean, sd, min and max.
      Regression gate: --baseline <results.json | run id> compares each model's test rows with the
      baseline's on the first metric, one-sided at 5%: "failed" (significantly worse, exit 1),
      "passed" (a drop larger than T ruled out; --tolerance T, default 0.05, --max-drop T is the
      same) or "inconclusive" (too few examples to tell: exit 1, or 0 with --allow-underpowered);
      --junit FILE writes JUnit XML; with GITHUB_STEP_SUMMARY set, a Markdown table is appended to it.
      --watch runs it again whenever the file, a file it imports or its dataset changes, and prints
      each evaluation against the previous good run (paired tests, examples changed); Ctrl-C stops.
  typelm reproduce [experiment] [--lm provider/model ...] [--limit N] [--seed N] [--no-cache] [--batch] [--out DIR]
      Runs a bundled experiment (default poem-sentiment): ${BUNDLED_EXPERIMENTS.join(", ")}.
      Takes every option of typelm run.
  typelm init <name>
      Writes experiments/<name>.ts and data/<name>/data.csv to start an experiment of your own.
  typelm runs [--kind evaluation|optimization|traces] [--limit N] [--store FILE|postgres://...]
      Lists the runs in .typelm/lab.sqlite of the current folder, newest first. runs, show and
      compare print the store they read on their first line. --store (on runs, show, compare, rescore, view)
      reads another file or a team's lab on PostgreSQL; without it, TYPELM_LAB_URL when set.
  typelm show <run id> [--store FILE|postgres://...]
      One run: an evaluation's model, metrics with intervals and failed rows, or an optimization's
      trials. A run id may be shortened to its first characters (8 are usually enough).
  typelm compare <run id A> <run id B> [--store FILE|postgres://...]
      Two evaluations of the same examples, paired: each metric's difference with its 95% interval
      and p-value, then the examples that changed.
      Two windows of production traces: typelm compare traces:M@14d..7d traces:M@7d..0d --metric <file>
      [--tolerance T] [--allow-underpowered] scores both (durations back from now) and gives the
      gate's verdict on B − A: paired by input when the same inputs recur, unpaired otherwise.
  typelm rescore <run id> --metric <file> [--metric <file> ...] [--store FILE|postgres://...]
      Scores the stored predictions of an evaluation run again, without calling its program, with
      the metrics the files default-export (a metric function or a Judge), and records a new run
      linked to the first (config.rescoredFrom), in the store the run was read from.
      The run id may be traces:<module>: that module's production traces of the last --since 7d
      (the default) are scored, as an evaluation run with intervals.
  typelm traces export --module <name> --out <DIR> [--reviewed] [--since 30d] [--store FILE|postgres://...]
      Writes a module's production traces (c.traces) as a dataset: DIR/data.jsonl (id, inputs,
      outputs) and DIR/signature.json, read by loadDataset and experiment files. --reviewed: only
      reviewed traces, corrected outputs first. Also: typelm traces prune --older-than 30d deletes
      older traces and their feedback.
  typelm view [--store .typelm/lab.sqlite|postgres://...] [--port 4173] [--host 127.0.0.1] [--review [--reviewer NAME]]
      A local web app over the lab store, read-only: runs, an evaluation's metrics and examples, one
      example, two runs compared, the registry. Prints the address; Ctrl-C stops it. Without --store,
      TYPELM_LAB_URL when set.
      --review also serves a review queue at /review (rows of evaluation and traces runs; pass, fail or
      a score, a corrected expected output, a note, from the keyboard; filters: a judge's score, users'
      feedback with /review?feedback=negative|positive|any) that writes reviews to the store;
      it prints the queue's address with the session's token. --reviewer NAME names who reviews.
  typelm lab copy <.typelm/lab.sqlite> <postgres://user@host/db>   (or the other way round)
      Copies a local lab's runs (with their rows, trials and batches), registry versions, reviews and
      users' feedback into a team's lab on PostgreSQL, or a team's lab into a file. Runs keep their ids;
      copying again adds nothing.
  typelm help [command]
      This text, or one command's part of it (also typelm <command> --help).

Exit codes: 0 done; 1 the command ran and failed (or the regression gate did not pass); 2 a usage
error (an unknown command or option, an option without its value, a value of the wrong form, a
missing or extra argument), with the command's usage.
`;

/** The commands that take every option of another command as well (`reproduce` runs as `run` does). */
export const SAME_OPTIONS: Readonly<Record<string, string>> = { reproduce: "run" };

/**
 * Each command's part of the usage, by name (`lab` for `typelm lab copy`): its first line and the
 * lines indented under it. The options a command takes are the ones its part names, so a new option
 * is declared where it is documented.
 */
export const COMMAND_USAGE: ReadonlyMap<string, string> = (() => {
  const parts = new Map<string, string>();
  let name: string | undefined;
  for (const line of USAGE.split("\n")) {
    const header = /^ {2}typelm ([a-z]+)/.exec(line);
    if (header !== null) parts.set(name = header[1]!, `${line}\n`);
    else if (name !== undefined && /^ {4,}\S/.test(line)) parts.set(name, `${parts.get(name)!}${line}\n`);
    else name = undefined;
  }
  return parts;
})();

/** The usage that declares a command's options: its own part, and the part of the command whose options it shares. */
export function declaring(command: string): string {
  const shared = SAME_OPTIONS[command];
  return `${COMMAND_USAGE.get(command) ?? ""}${shared === undefined ? "" : COMMAND_USAGE.get(shared) ?? ""}`;
}

/** The options a command takes (without --help, which every command takes): the `--name`s its usage names. */
export function optionsOf(command: string): Set<string> {
  return new Set([...declaring(command).matchAll(/--([a-z][a-z-]*[a-z])/g)].map((m) => m[1]!));
}

/**
 * What the usage and the parser disagree on (both empty when they agree): options no command's usage
 * names, which no command would take, and options a usage names that the parser does not know.
 */
export function undeclaredOptions(): { unused: string[]; unparsed: string[] } {
  const named = new Set([...COMMAND_USAGE.keys()].flatMap((c) => [...optionsOf(c)]));
  return {
    unused: Object.keys(OPTIONS).filter((o) => o !== "help" && !named.has(o)),
    unparsed: [...named].filter((o) => !Object.hasOwn(OPTIONS, o)),
  };
}

/** A command's usage (the whole usage for no command or an unknown one). */
export function usageOf(command: string | undefined): string {
  const part = command === undefined ? undefined : COMMAND_USAGE.get(command);
  return part === undefined ? USAGE : `Usage:\n${part}`;
}

/** Every option of every command, for node:util's parseArgs; which command takes which is in its usage. */
export const OPTIONS = {
  lm: { type: "string", multiple: true }, limit: { type: "string" }, seed: { type: "string" }, "no-cache": { type: "boolean" },
  out: { type: "string" }, batch: { type: "boolean" }, kind: { type: "string" }, help: { type: "boolean", short: "h" },
  baseline: { type: "string" }, "max-drop": { type: "string" }, junit: { type: "string" }, seeds: { type: "string" },
  tolerance: { type: "string" }, "allow-underpowered": { type: "boolean" },
  metric: { type: "string", multiple: true }, watch: { type: "boolean" },
  store: { type: "string" }, port: { type: "string" }, host: { type: "string" },
  review: { type: "boolean" }, reviewer: { type: "string" },
  module: { type: "string" }, reviewed: { type: "boolean" }, since: { type: "string" }, "older-than": { type: "string" },
} as const satisfies Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

/**
 * What is wrong with a command line before it runs, as a usage error naming the command: a command
 * typelm does not have (`command` null, `message` the command given), an option the command does not
 * take (with the closest one it does take, and the commands that take it), an option without its
 * value, or a value given to an option that takes none. Undefined when nothing is.
 */
export function commandLineError(argv: readonly string[]): { command: string | undefined | null; message: string } | undefined {
  const { tokens } = parseArgs({ args: [...argv], allowPositionals: true, strict: false, tokens: true, options: OPTIONS });
  const first = tokens.find((t) => t.kind === "positional")?.value;
  // An unknown command is the first thing wrong; without a command, options are checked against every command's.
  if (first !== undefined && !COMMAND_USAGE.has(first)) return { command: null, message: first };
  const command = first;
  const takes = command === undefined ? new Set(Object.keys(OPTIONS)) : optionsOf(command);
  takes.add("help");
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = token.rawName;
    const declared = Object.hasOwn(OPTIONS, token.name) ? (OPTIONS as Record<string, { type: "string" | "boolean" }>)[token.name]! : undefined;
    if (!takes.has(token.name) || declared === undefined) {
      const near = closest(token.name, takes);
      const elsewhere = [...COMMAND_USAGE.keys()].filter((c) => c !== command && optionsOf(c).has(token.name));
      const what = command === undefined || elsewhere.length === 0 ? `unknown option ${option}` : `${option} is not an option of ${command}: it goes with typelm ${listed(elsewhere)}`;
      return { command, message: `${what}${near === undefined ? "" : `; did you mean --${near}?`}` };
    }
    // A value must follow (--limit 5 or --limit=5); "--limit --seed 3" would read "--seed" as the limit.
    if (declared.type === "string" && (token.value === undefined || (!token.inlineValue && token.value.startsWith("-")))) {
      return { command, message: `${option} needs a value${exampleOf(command, token.name)}` };
    }
    if (declared.type === "boolean" && token.inlineValue === true) {
      return { command, message: `${option} takes no value; received ${option}=${token.value ?? ""}` };
    }
  }
  return undefined;
}

/** ", e.g. --limit N", as the command's usage writes the option with its value; "" when it does not. */
export function exampleOf(command: string | undefined, name: string): string {
  const shown = new RegExp(`--${name} ((?:<[^>]+>|[^\\s\\]<]+))`).exec(command === undefined ? USAGE : declaring(command));
  return shown === null ? "" : `, e.g. --${name} ${shown[1]}`;
}

/** "a", "a and b", "a, b and c". */
export function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]!}`;
}

/** A count that must be at least 1 (--limit). */
export function positive(text: string | undefined, name: string): number | undefined {
  const n = count(text, name);
  if (n === 0) throw new UsageError(`--${name} expects a whole number ≥ 1; received 0`, { field: name });
  return n;
}

/** A count (a whole number) given to `--<name>`, or undefined when not given. */
export function count(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--${name} expects a whole number; received ${JSON.stringify(text)}`, { field: name });
  }
  return n;
}
