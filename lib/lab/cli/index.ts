// The `typelm` command line: runCli reads a command line and runs its command. The rooms of cli/:
// options.ts (the usage and the options each command takes), usage.ts (usage errors), show.ts (show,
// compare, init), runs.ts (runs), rescore.ts, gate-options.ts, bin.ts (the executable). The work itself
// is done below: experiment/ (run, reproduce), runs/ (the stores a command reads), the viewer, lab copy.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { TypelmError, ValidationError } from "../../errors.js";
import { LabStore } from "../../store/lab-store.js";
import { openPostgresLabStore } from "../../store/pg-lab-store.js";
import { runById } from "../runs/find.js";
import { compareRuns, initExperiment, showRun } from "./show.js";
import { installCommand, isInstalled } from "../../optional.js";
import { reproduce, runAndReport, type ReproduceOutcome } from "../experiment/reproduce.js";
import { printable } from "../terminal.js";
import { closest, UsageError } from "./usage.js";
import { userCodeFailure } from "../experiment/user-code.js";
import { chooseStore, postgresRunById, postgresRunLines } from "../runs/team-store.js";
import { COMMAND_USAGE, commandLineError, count, OPTIONS, positive, USAGE, usageOf } from "./options.js";
import { runsLines, runsTable, storeLine } from "./runs.js";
import { gateOptions, gateUsage } from "./gate-options.js";

export { undeclaredOptions } from "./options.js";

/** What a command line runs with: where its output goes, its working folder and environment, and its waits. */
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
      if (values.watch === true) return await (await import("../watch/watch.js")).watchRun({ file: rest[0]!, argv, cwd, env: io.env ?? process.env, io, runOnce: async (loaded) => reported(await runAndReport(loaded, options)) });
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
    if (command === "traces" || (command === "rescore" && rest[0]?.startsWith("traces:") === true) || (command === "compare" && rest.length === 2 && rest.every((r) => r.startsWith("traces:")))) {
      // Production traces (lib/lab/cli/traces.ts): export, prune, rescore a window, compare two windows.
      const t = await import("./traces.js");
      const env = io.env ?? process.env;
      if (command === "traces") {
        io.stdout(await t.tracesCommand(rest, values, env, cwd));
        return 0;
      }
      if (command === "rescore") {
        if (rest.length !== 1) throw new UsageError("rescore takes one traces:<module>, e.g. typelm rescore traces:Pipeline --since 7d --metric judge.mjs", { field: "run" });
        io.stdout(await t.withTraceStore(values, env, cwd, (store) => t.rescoreTraces(store, rest[0]!, values, cwd)));
        return 0;
      }
      const { text, ok } = await t.withTraceStore(values, env, cwd, (store) => t.compareWindows(store, [rest[0]!, rest[1]!], values, cwd));
      io.stdout(text);
      return ok ? 0 : 1;
    }
    if (command === "show" || command === "compare") {
      const want = command === "show" ? 1 : 2;
      if (rest.length !== want) {
        throw new UsageError(command === "show" ? "show takes one run id (typelm runs lists them)" : "compare takes two evaluation run ids (typelm runs --kind evaluation lists them)", { field: "run" });
      }
      const chosen = chooseStore(values.store, io.env ?? process.env, cwd);
      if (chosen.engine === "postgresql") {
        const team = openPostgresLabStore(chosen.url);
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
      const { rescoreCommand } = await import("./rescore.js");
      if (chosen.engine === "postgresql") {
        const team = openPostgresLabStore(chosen.url);
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
      const { serveCommand } = await import("../../view/server.js");
      if (values.reviewer !== undefined && values.review !== true) throw new UsageError("--reviewer names who reviews: give it with --review", { field: "reviewer" });
      return await serveCommand({ store, port, host: values.host, review: values.review === true, reviewer: values.reviewer }, io);
    }
    if (command === "lab") {
      if (rest[0] !== "copy" || rest.length !== 3) {
        throw new UsageError("lab takes: lab copy <lab store file> <postgres://...> (or the other way round), e.g. typelm lab copy .typelm/lab.sqlite postgres://lab@db/typelm", { field: "lab" });
      }
      const { copyLab, copyReportText } = await import("../../store/copy/lab-copy.js");
      const report = await copyLab(rest[1]!, rest[2]!, cwd);
      io.stdout(copyReportText(report).split("\n").map(printable).join("\n"));
      // Versions left behind (another module under the same name and version there) fail the command.
      return report.registry.conflicts.length > 0 ? 1 : 0;
    }
    if (command === "runs") {
      if (rest.length > 0) throw new UsageError(`runs takes no arguments; received ${rest.join(" ")}`, { field: "runs" });
      const kind = values.kind;
      if (kind !== undefined && kind !== "evaluation" && kind !== "optimization" && kind !== "traces") {
        throw new UsageError(`--kind expects evaluation, optimization or traces; received ${kind}`, { field: "kind" });
      }
      const limit = count(values.limit, "limit");
      if (limit === 0) throw new UsageError("--limit expects a whole number ≥ 1; received 0", { field: "limit" });
      const chosen = chooseStore(values.store, io.env ?? process.env, cwd);
      if (chosen.engine === "postgresql") {
        const label = openPostgresLabStore(chosen.url).path;
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
