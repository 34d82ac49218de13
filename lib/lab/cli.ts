import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { TypelmError, ValidationError } from "../errors.js";
import { openStoreSync, storeError } from "../store/db.js";
import type { RunKind } from "../store/records.js";
import { LabStore } from "../store/lab-store.js";
import { compareRuns, initExperiment, runById, runTitle, showRun } from "./commands.js";
import { installCommand, isInstalled } from "../optional.js";
import { BUNDLED_EXPERIMENTS, reproduce, runAndReport, type GateOptions, type ReproduceOutcome } from "./reproduce.js";
import { printable } from "./terminal.js";
import { closest, UsageError } from "./usage.js";
import { userCodeFailure } from "./user-code.js";
import { chooseStore, PostgresLabStore, postgresRunById, postgresRunLines, type RunLine } from "./team-store.js";

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** How long to wait for a local Ollama (ms). */
  ollamaProbeMs?: number;
  /** How long the check before a run waits for each model's first answer (ms). */
  modelCheckMs?: number;
}

const USAGE = `Usage:
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
  typelm runs [--kind evaluation|optimization] [--limit N] [--store FILE|postgres://...]
      Lists the runs in .typelm/lab.sqlite of the current folder, newest first. runs, show and
      compare print the store they read on their first line. --store (on runs, show, compare, rescore, view)
      reads another file or a team's lab on PostgreSQL; without it, TYPELM_LAB_URL when set.
  typelm show <run id> [--store FILE|postgres://...]
      One run: an evaluation's model, metrics with intervals and failed rows, or an optimization's
      trials. A run id may be shortened to its first characters (8 are usually enough).
  typelm compare <run id A> <run id B> [--store FILE|postgres://...]
      Two evaluations of the same examples, paired: each metric's difference with its 95% interval
      and p-value, then the examples that changed.
  typelm rescore <run id> --metric <file> [--metric <file> ...] [--store FILE|postgres://...]
      Scores the stored predictions of an evaluation run again, without calling its program, with
      the metrics the files default-export (a metric function or a Judge), and records a new run
      linked to the first (config.rescoredFrom), in the store the run was read from.
  typelm view [--store .typelm/lab.sqlite|postgres://...] [--port 4173] [--host 127.0.0.1]
      A local web app over the lab store, read-only: runs, an evaluation's metrics and examples, one
      example, two runs compared, the registry. Prints the address; Ctrl-C stops it. Without --store,
      TYPELM_LAB_URL when set.
  typelm lab copy <.typelm/lab.sqlite> <postgres://user@host/db>   (or the other way round)
      Copies a local lab's runs (with their rows, trials and batches) and registry versions into a
      team's lab on PostgreSQL, or a team's lab into a file. Runs keep their ids; copying again adds nothing.
  typelm help [command]
      This text, or one command's part of it (also typelm <command> --help).

Exit codes: 0 done; 1 the command ran and failed (or the regression gate did not pass); 2 a usage
error (an unknown command or option, an option without its value, a value of the wrong form, a
missing or extra argument), with the command's usage.
`;

/** The commands that take every option of another command as well (`reproduce` runs as `run` does). */
const SAME_OPTIONS: Readonly<Record<string, string>> = { reproduce: "run" };

/**
 * Each command's part of the usage, by name (`lab` for `typelm lab copy`): its first line and the
 * lines indented under it. The options a command takes are the ones its part names, so a new option
 * is declared where it is documented.
 */
const COMMAND_USAGE: ReadonlyMap<string, string> = (() => {
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
function declaring(command: string): string {
  const shared = SAME_OPTIONS[command];
  return `${COMMAND_USAGE.get(command) ?? ""}${shared === undefined ? "" : COMMAND_USAGE.get(shared) ?? ""}`;
}

/** The options a command takes (without --help, which every command takes): the `--name`s its usage names. */
function optionsOf(command: string): Set<string> {
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
function usageOf(command: string | undefined): string {
  const part = command === undefined ? undefined : COMMAND_USAGE.get(command);
  return part === undefined ? USAGE : `Usage:\n${part}`;
}

/** Every option of every command, for node:util's parseArgs; which command takes which is in its usage. */
const OPTIONS = {
  lm: { type: "string", multiple: true }, limit: { type: "string" }, seed: { type: "string" }, "no-cache": { type: "boolean" },
  out: { type: "string" }, batch: { type: "boolean" }, kind: { type: "string" }, help: { type: "boolean", short: "h" },
  baseline: { type: "string" }, "max-drop": { type: "string" }, junit: { type: "string" }, seeds: { type: "string" },
  tolerance: { type: "string" }, "allow-underpowered": { type: "boolean" },
  metric: { type: "string", multiple: true }, watch: { type: "boolean" },
  store: { type: "string" }, port: { type: "string" }, host: { type: "string" },
} as const satisfies Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

/** Runs one command line; returns the exit code (0 done, 1 failed, 2 a usage error: see USAGE). */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const wrong = commandLineError(argv);
  if (wrong?.command === null) return unknownCommand(wrong.message, io);
  if (wrong !== undefined) {
    io.stderr(`typelm${wrong.command === undefined ? "" : ` ${printable(wrong.command)}`}: ${printable(wrong.message)}\n\n${usageOf(wrong.command)}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    io.stderr(`${printable(error instanceof Error ? error.message : String(error))}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (command === "help" || (values.help === true && command !== undefined)) {
    // `typelm help run` and `typelm run --help`: that command's part; `typelm help`: all of it.
    const about = command === "help" ? rest[0] : command;
    if (about !== undefined && !COMMAND_USAGE.has(about)) return unknownCommand(about, io);
    io.stdout(about === undefined ? USAGE : usageOf(about));
    return 0;
  }
  if (values.help === true || command === undefined) {
    (command === undefined && values.help !== true ? io.stderr : io.stdout)(USAGE);
    return command === undefined && values.help !== true ? 2 : 0;
  }
  if (!COMMAND_USAGE.has(command)) return unknownCommand(command, io);
  const cwd = resolve(io.cwd ?? process.cwd());
  try {
    const log = (line: string) => io.stderr(`${printable(line)}\n`);
    const common = () => ({
      lm: values.lm, limit: positive(values.limit, "limit"), seed: count(values.seed, "seed"), seeds: positive(values.seeds, "seeds"), out: values.out,
      cache: values["no-cache"] !== true, batch: values.batch === true, cwd, env: io.env, ollamaProbeMs: io.ollamaProbeMs, modelCheckMs: io.modelCheckMs, log,
      gate: gateOptions(values),
    });
    const reported = (outcome: ReproduceOutcome) => {
      io.stdout(`${printable(join(outcome.dir, "report.md"))}\n`);
      // The regression gate: "failed", or "inconclusive" without --allow-underpowered, fails the command.
      return outcome.gate?.failed === true ? 1 : 0;
    };
    if (command === "reproduce") {
      if (rest.length > 1) throw new UsageError(`reproduce takes one experiment; received ${rest.join(" ")}`, { field: "experiment" });
      if (values.watch === true) throw new UsageError("--watch goes with typelm run <file>: it watches an experiment file of yours", { field: "watch" });
      return reported(await reproduce({ experiment: rest[0] ?? "poem-sentiment", ...common() }));
    }
    if (command === "run") {
      if (rest.length !== 1) {
        throw new UsageError(rest.length === 0 ? "run needs an experiment file, e.g. typelm run experiments/tickets.ts (typelm init <name> writes one)" : `run takes one experiment file; received ${rest.join(" ")}`, { field: "file" });
      }
      const options = common();
      if (values.watch === true) return await (await import("./watch.js")).watchRun({ file: rest[0]!, argv, cwd, env: io.env ?? process.env, io, runOnce: async (loaded) => reported(await runAndReport(loaded, options)) });
      return reported(await runAndReport(rest[0]!, options));
    }
    if (command === "init") {
      if (rest.length !== 1) throw new UsageError("init takes one name, e.g. typelm init tickets", { field: "name" });
      const written = initExperiment(cwd, rest[0]!);
      // The file is TypeScript: without tsx (an optional peer dependency) say how to get it now, not at the run.
      const tsx = isInstalled("tsx") ? "" : ` (TypeScript experiment files need tsx: ${installCommand("tsx")})`;
      io.stdout(`${written.map(printable).join("\n")}\nNext: typelm run ${printable(written[0]!)}${tsx}\n`);
      return 0;
    }
    if (command === "show" || command === "compare") {
      const want = command === "show" ? 1 : 2;
      if (rest.length !== want) {
        throw new UsageError(command === "show" ? "show takes one run id (typelm runs lists them)" : "compare takes two evaluation run ids (typelm runs --kind evaluation lists them)", { field: "run" });
      }
      const chosen = chooseStore(values.store, io.env ?? process.env, cwd);
      if (chosen.engine === "postgresql") {
        const team = PostgresLabStore.open(chosen.url);
        const found = [];
        for (const id of rest) found.push(await postgresRunById(team, id));
        io.stdout(`${storeLine(team.path)}${command === "show" ? showRun(found[0]!) : compareRuns(found[0]!, found[1]!)}`);
        return 0;
      }
      const path = chosen.path;
      if (!existsSync(path)) throw new ValidationError(`no lab store at ${path}; run an experiment first (typelm run, typelm reproduce)`, { field: "run" });
      const store = LabStore.open(path);
      const runs = rest.map((id) => runById(store, id));
      io.stdout(`${storeLine(path)}${command === "show" ? showRun(runs[0]!) : compareRuns(runs[0]!, runs[1]!)}`);
      return 0;
    }
    if (command === "rescore") {
      if (rest.length !== 1) throw new UsageError("rescore takes one evaluation run id, e.g. typelm rescore 1a2b3c4d --metric judge.ts (typelm runs lists them)", { field: "run" });
      if (values.metric === undefined) throw new UsageError("rescore needs at least one --metric <file> (a file default-exporting a metric function or a Judge)", { field: "metric" });
      // The file, or a team's lab (--store postgres://..., else TYPELM_LAB_URL): the new run goes where the source is.
      const chosen = chooseStore(values.store, io.env ?? process.env, cwd);
      const { rescoreCommand } = await import("./rescore-command.js");
      if (chosen.engine === "postgresql") {
        const team = PostgresLabStore.open(chosen.url);
        try {
          io.stdout(`${storeLine(team.path)}${await rescoreCommand(team, rest[0]!, values.metric ?? [], cwd)}`);
        } finally {
          await team.close();
        }
        return 0;
      }
      const path = chosen.path;
      if (!existsSync(path)) throw new ValidationError(`no lab store at ${path}; run an experiment first (typelm run, typelm reproduce)`, { field: "run" });
      io.stdout(`${storeLine(path)}${await rescoreCommand(LabStore.open(path), rest[0]!, values.metric ?? [], cwd)}`);
      return 0;
    }
    if (command === "view") {
      if (rest.length > 0) throw new UsageError(`view takes no arguments; received ${rest.join(" ")} (the store is --store PATH)`, { field: "view" });
      const port = count(values.port, "port");
      if (port !== undefined && port > 65535) throw new UsageError(`--port expects a port number 0-65535; received ${port}`, { field: "port" });
      // A file, or a team's lab on PostgreSQL (--store postgres://..., else TYPELM_LAB_URL).
      const chosen = chooseStore(values.store, io.env ?? process.env, cwd);
      const store = chosen.engine === "postgresql" ? chosen.url : chosen.path;
      // Loaded here only: `import "typelm"` never loads the viewer.
      const { serveCommand } = await import("../view/server.js");
      return await serveCommand({ store, port, host: values.host }, io);
    }
    if (command === "lab") {
      if (rest[0] !== "copy" || rest.length !== 3) {
        throw new UsageError("lab takes: lab copy <lab store file> <postgres://...> (or the other way round), e.g. typelm lab copy .typelm/lab.sqlite postgres://lab@db/typelm", { field: "lab" });
      }
      const { copyLab, copyReportText } = await import("../store/lab-copy.js");
      const report = await copyLab(rest[1]!, rest[2]!, cwd);
      io.stdout(copyReportText(report).split("\n").map(printable).join("\n"));
      // Versions left behind (another module under the same name and version there) fail the command.
      return report.registry.conflicts.length > 0 ? 1 : 0;
    }
    if (command === "runs") {
      if (rest.length > 0) throw new UsageError(`runs takes no arguments; received ${rest.join(" ")}`, { field: "runs" });
      const kind = values.kind;
      if (kind !== undefined && kind !== "evaluation" && kind !== "optimization") {
        throw new UsageError(`--kind expects evaluation or optimization; received ${kind}`, { field: "kind" });
      }
      const limit = count(values.limit, "limit");
      if (limit === 0) throw new UsageError("--limit expects a whole number ≥ 1; received 0", { field: "limit" });
      const chosen = chooseStore(values.store, io.env ?? process.env, cwd);
      if (chosen.engine === "postgresql") {
        const label = PostgresLabStore.open(chosen.url).path;
        io.stdout(runsLines(label, await postgresRunLines(chosen.url, kind, limit)));
        return 0;
      }
      const path = chosen.path;
      // Listing must not leave a new, empty store behind in a folder that had none.
      io.stdout(existsSync(path) ? runsTable(path, kind, limit) : `No lab store at ${printable(path)} (typelm reproduce creates it).\n`);
      return 0;
    }
    return unknownCommand(command, io);
  } catch (error) {
    // A command line it cannot read is a usage error, with the command's usage; a wrong gate option or
    // baseline exits 2 without it; anything else is a command that failed.
    const usage = error instanceof UsageError ? `\n${usageOf(command)}` : "";
    io.stderr(`typelm ${printable(command)}: ${printable(withoutCommand(failure(error), command))}\n${usage}`);
    return usage !== "" || gateUsage(error) ? 2 : 1;
  }
}

/** `typelm <unknown>`: exit 2 with the closest command's name, and the whole usage. */
function unknownCommand(command: string, io: CliIO): number {
  const near = closest(command, COMMAND_USAGE.keys());
  io.stderr(`Unknown command "${printable(command)}"${near === undefined ? "" : `; did you mean typelm ${near}?`}\n\n${USAGE}`);
  return 2;
}

/**
 * What is wrong with a command line before it runs, as a usage error naming the command: a command
 * typelm does not have (`command` null, `message` the command given), an option the command does not
 * take (with the closest one it does take, and the commands that take it), an option without its
 * value, or a value given to an option that takes none. Undefined when nothing is.
 */
function commandLineError(argv: readonly string[]): { command: string | undefined | null; message: string } | undefined {
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
function exampleOf(command: string | undefined, name: string): string {
  const shown = new RegExp(`--${name} ((?:<[^>]+>|[^\\s\\]<]+))`).exec(command === undefined ? USAGE : declaring(command));
  return shown === null ? "" : `, e.g. --${name} ${shown[1]}`;
}

/** "a", "a and b", "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]!}`;
}

/** A count that must be at least 1 (--limit). */
function positive(text: string | undefined, name: string): number | undefined {
  const n = count(text, name);
  if (n === 0) throw new UsageError(`--${name} expects a whole number ≥ 1; received 0`, { field: name });
  return n;
}

function count(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--${name} expects a whole number; received ${JSON.stringify(text)}`, { field: name });
  }
  return n;
}

/** A message without a leading "<command>: " (the library's compare() names itself): the line already names the command. */
function withoutCommand(message: string, command: string): string {
  return message.startsWith(`${command}: `) ? message.slice(command.length + 2) : message;
}

/**
 * A failure as one line: typelm's own errors say what went wrong and how to fix it; an error the
 * experiment's own code threw says so, with its message and line; anything else is a bug or an
 * environment problem, named by its class so it can be reported.
 */
function failure(error: unknown): string {
  if (error instanceof TypelmError) return error.message;
  const theirs = userCodeFailure(error);
  if (theirs !== undefined) return theirs;
  // Not `instanceof Error`: errors from Node's own modules may come from another realm.
  const e = error as { name?: unknown; message?: unknown } | null;
  if (typeof e?.message === "string") {
    return `unexpected ${typeof e.name === "string" ? e.name : "error"}: ${e.message} (please report this with the command you ran)`;
  }
  return `unexpected failure: ${String(error)}`;
}

/**
 * The runs, newest first, one line each. Read from the table directly rather than through
 * `LabStore.runs`, which parses every run's config and summary: one damaged row would hide them all,
 * where here it is listed and marked unreadable.
 */
function runsTable(path: string, kind: RunKind | undefined, limit: number | undefined): string {
  const sql = `SELECT id, kind, name, status, started_at, score, config_json, summary_json FROM lab_runs${kind ? " WHERE kind = @kind" : ""} ` +
    `ORDER BY started_at DESC, seq DESC${limit !== undefined ? " LIMIT @limit" : ""}`;
  let runs: RunLine[];
  try {
    runs = openStoreSync(path).prepare<[Record<string, unknown>], RunLine>(sql).all({ ...(kind ? { kind } : {}), ...(limit !== undefined ? { limit } : {}) });
  } catch (error) {
    throw storeError(path, "read", error);
  }
  return runsLines(path, runs);
}

/** The runs as `typelm runs` prints them, for either engine (`label`: the file or the database). */
function runsLines(path: string, runs: RunLine[]): string {
  if (runs.length === 0) return `No runs in ${printable(path)}.\n`;
  const rows = runs.map((r) => {
    const unreadable = (["config", "summary"] as const).filter((part) => !parses(r[`${part}_json`]));
    const status = unreadable.length === 0 ? r.status : `${r.status} (${unreadable.join(" and ")} unreadable)`;
    return [r.id, r.kind, runTitle(r.name, r.kind, configOf(r.config_json)), status, r.started_at, r.score === null ? "" : r.score.toFixed(3)].map(printable);
  });
  const header = ["id", "kind", "name", "status", "started", "score"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return storeLine(path) + [line(header), ...rows.map(line)].join("\n") + "\n";
}

/** The first line runs, show and compare print: the store they read (a notebook or script may use another). */
function storeLine(path: string): string {
  return `lab store: ${printable(path)}\n`;
}

/** A run's stored config, or {} when it does not parse (the run is then marked unreadable). */
function configOf(json: string): Record<string, unknown> {
  try {
    const config = JSON.parse(json) as unknown;
    return config !== null && typeof config === "object" ? config as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

/** A wrong gate option or baseline (exit 2): an error of --baseline, --tolerance or --max-drop. */
function gateUsage(error: unknown): boolean {
  return error instanceof ValidationError && (error.field === "baseline" || error.field === "tolerance" || error.field === "maxDrop");
}

/** `--baseline FILE|RUN [--tolerance T | --max-drop T] [--allow-underpowered] [--junit FILE]`; the others need --baseline. */
function gateOptions(values: {
  baseline?: string | undefined; "max-drop"?: string | undefined; tolerance?: string | undefined; "allow-underpowered"?: boolean | undefined; junit?: string | undefined;
}): GateOptions | undefined {
  if (values.baseline === undefined) {
    if (values["max-drop"] !== undefined || values.tolerance !== undefined || values["allow-underpowered"] !== undefined || values.junit !== undefined) {
      throw new UsageError("--tolerance (--max-drop), --allow-underpowered and --junit need --baseline <results.json | run id>: the gate compares this run with a baseline", { field: "baseline" });
    }
    return undefined;
  }
  const parse = (name: "tolerance" | "max-drop"): number | undefined => {
    const text = values[name];
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^(0|[1-9]\d*)?(\.\d+)?$/.test(text) || text === "" || text === "." || !(value >= 0 && value < 1)) {
      throw new UsageError(
        `--${name} expects the largest drop to tolerate, a number from 0 up to (not including) 1, e.g. 0.05 for 5 points; received ${JSON.stringify(text)}`,
        { field: "tolerance" },
      );
    }
    return value;
  };
  const tolerance = parse("tolerance"), maxDrop = parse("max-drop");
  if (tolerance !== undefined && maxDrop !== undefined && tolerance !== maxDrop) {
    throw new UsageError(`--tolerance ${tolerance} and --max-drop ${maxDrop} are the same option with two values; give one`, { field: "tolerance" });
  }
  return { baseline: values.baseline, tolerance: tolerance ?? maxDrop, allowUnderpowered: values["allow-underpowered"] === true, junit: values.junit };
}
