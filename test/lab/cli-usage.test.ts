import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { runBuiltCli, runCliHere } from "../helpers/cli.js";

// Exit codes: 0 done, 1 the command ran and failed, 2 a usage error. Every kind of usage error is 2,
// with one sentence naming the command and that command's usage (not every command's).

const dir = mkdtempSync(join(tmpdir(), "typelm-cli-usage-"));
const store = join(dir, ".typelm/lab.sqlite");
afterAll(() => {
  closeStoreSync(store);
  rmSync(dir, { recursive: true, force: true });
});

/** The first line of each command's usage, as `typelm help` prints it. */
const FIRST_LINES = {
  run: "  typelm run <experiment file> [--lm provider/model ...]",
  reproduce: "  typelm reproduce [experiment]",
  init: "  typelm init <name>",
  runs: "  typelm runs [--kind evaluation|optimization|traces]",
  show: "  typelm show <run id>",
  compare: "  typelm compare <run id A> <run id B>",
  rescore: "  typelm rescore <run id> --metric <file>",
  view: "  typelm view [--store",
  lab: "  typelm lab copy",
} as const;
type Command = keyof typeof FIRST_LINES;

/** A usage error: exit 2, the sentence first, then "Usage:" and the usage of `command` only. */
async function expectUsageError(args: string[], command: Command, sentence: string): Promise<void> {
  const r = await runCliHere(args, dir);
  const [first, blank, usage, ...part] = r.stderr.split("\n");
  expect({ args, code: r.code, first, blank, usage, stdout: r.stdout }).toEqual({ args, code: 2, first: `typelm ${command}: ${sentence}`, blank: "", usage: "Usage:", stdout: "" });
  expect(part[0]!.startsWith(FIRST_LINES[command])).toBe(true);
  for (const [other, line] of Object.entries(FIRST_LINES)) {
    if (other !== command) expect({ args, shown: r.stderr.includes(`\n${line}`) }).toEqual({ args, shown: false });
  }
}

describe("typelm: every usage error exits 2 with one sentence and the command's usage", () => {
  it("an unknown option gets the closest option of that command, and that command's usage (before: every command's usage, no suggestion)", async () => {
    await expectUsageError(["run", "exp.ts", "--limt", "3"], "run", "unknown option --limt; did you mean --limit?");
    await expectUsageError(["run", "exp.ts", "--nocache"], "run", "unknown option --nocache; did you mean --no-cache?");
    await expectUsageError(["run", "exp.ts", "--max-dorp", "0.1"], "run", "unknown option --max-dorp; did you mean --max-drop?");
    await expectUsageError(["runs", "--knd", "evaluation"], "runs", "unknown option --knd; did you mean --kind?");
    await expectUsageError(["show", "abc", "--stroe", "x.sqlite"], "show", "unknown option --stroe; did you mean --store?");
    await expectUsageError(["view", "--prot", "5000"], "view", "unknown option --prot; did you mean --port?");
    await expectUsageError(["rescore", "abc", "--metrics", "m.ts"], "rescore", "unknown option --metrics; did you mean --metric?");
    // reproduce takes run's options too.
    await expectUsageError(["reproduce", "--sedds", "2"], "reproduce", "unknown option --sedds; did you mean --seeds?");
    // Nothing close: no suggestion, still that command's usage.
    await expectUsageError(["runs", "--frobnicate"], "runs", "unknown option --frobnicate");
  });

  it("an option of another command names the commands that take it (before: exit 1)", async () => {
    await expectUsageError(["init", "tickets", "--store", "x.sqlite"], "init", "--store is not an option of init: it goes with typelm runs, show, compare, rescore, traces and view");
    await expectUsageError(["runs", "--port", "5000"], "runs", "--port is not an option of runs: it goes with typelm view");
    await expectUsageError(["show", "abc", "--baseline", "r.json"], "show", "--baseline is not an option of show: it goes with typelm run and reproduce");
    await expectUsageError(["run", "exp.ts", "--kind", "evaluation"], "run", "--kind is not an option of run: it goes with typelm runs");
  });

  it("an option without its value, or a value for an option that takes none", async () => {
    await expectUsageError(["runs", "--limit"], "runs", "--limit needs a value, e.g. --limit N");
    // "--seed" is not the limit's value.
    await expectUsageError(["run", "exp.ts", "--limit", "--seed", "3"], "run", "--limit needs a value, e.g. --limit N");
    await expectUsageError(["reproduce", "--baseline"], "reproduce", "--baseline needs a value, e.g. --baseline <results.json | run id>");
    await expectUsageError(["run", "exp.ts", "--batch=yes"], "run", "--batch takes no value; received --batch=yes");
  });

  it("a value of the wrong form (before: exit 1)", async () => {
    await expectUsageError(["runs", "--limit", "ten"], "runs", '--limit expects a whole number; received "ten"');
    await expectUsageError(["runs", "--limit", "0"], "runs", "--limit expects a whole number ≥ 1; received 0");
    await expectUsageError(["reproduce", "--seeds", "0"], "reproduce", "--seeds expects a whole number ≥ 1; received 0");
    await expectUsageError(["runs", "--kind", "eval"], "runs", "--kind expects evaluation, optimization or traces; received eval");
    await expectUsageError(["view", "--port", "70000"], "view", "--port expects a port number 0-65535; received 70000");
    await expectUsageError(["run", "exp.ts", "--baseline", "r.json", "--max-drop", "5"], "run", '--max-drop expects the largest drop to tolerate, a number from 0 up to (not including) 1, e.g. 0.05 for 5 points; received "5"');
    await expectUsageError(["run", "exp.ts", "--junit", "x.xml"], "run", "--tolerance (--max-drop), --allow-underpowered and --junit need --baseline <results.json | run id>: the gate compares this run with a baseline");
  });

  it("a missing or extra argument (before: exit 1)", async () => {
    await expectUsageError(["run"], "run", "run needs an experiment file, e.g. typelm run experiments/tickets.ts (typelm init <name> writes one)");
    await expectUsageError(["run", "a.ts", "b.ts"], "run", "run takes one experiment file; received a.ts b.ts");
    await expectUsageError(["reproduce", "gsm8k", "banking77"], "reproduce", "reproduce takes one experiment; received gsm8k banking77");
    await expectUsageError(["init"], "init", "init takes one name, e.g. typelm init tickets");
    await expectUsageError(["show"], "show", "show takes one run id (typelm runs lists them)");
    await expectUsageError(["compare", "abc"], "compare", "compare takes two evaluation run ids (typelm runs --kind evaluation lists them)");
    await expectUsageError(["rescore"], "rescore", "rescore takes one evaluation run id, e.g. typelm rescore 1a2b3c4d --metric judge.ts (typelm runs lists them)");
    await expectUsageError(["rescore", "abc"], "rescore", "rescore needs at least one --metric <file> (a file default-exporting a metric function or a Judge)");
    await expectUsageError(["runs", "extra"], "runs", "runs takes no arguments; received extra");
    await expectUsageError(["view", "extra"], "view", "view takes no arguments; received extra (the store is --store PATH)");
    await expectUsageError(["lab", "copy", "a.sqlite"], "lab", "lab takes: lab copy <lab store file> <postgres://...> (or the other way round), e.g. typelm lab copy .typelm/lab.sqlite postgres://lab@db/typelm");
  });

  it("an unknown command gets the closest command and the whole usage; no command is a usage error too", async () => {
    const r = await runCliHere(["rnus"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe('Unknown command "rnus"; did you mean typelm runs?');
    for (const line of Object.values(FIRST_LINES)) expect(r.stderr).toContain(`\n${line}`);
    // The unknown command is what is wrong first, not the options that follow it.
    const both = await runCliHere(["rnus", "--lmit", "3"], dir);
    expect({ code: both.code, first: both.stderr.split("\n")[0] }).toEqual({ code: 2, first: 'Unknown command "rnus"; did you mean typelm runs?' });
    const none = await runCliHere([], dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(FIRST_LINES.run);
  });

  it("a failure that is not the command line's still exits 1, with no usage", async () => {
    const lab = LabStore.open(store);
    lab.finishRun(lab.startRun({ kind: "evaluation", name: "one" }), { status: "completed", score: 1 });
    const r = await runCliHere(["show", "zzzz"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`typelm show: no run whose id is or starts with "zzzz" in ${store}; "typelm runs" lists the runs and their ids\n`);
    const missing = await runCliHere(["run", "no-such-file.ts"], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).not.toContain("Usage:");
  });

  it("help: the whole usage, or one command's part, on stdout with exit 0; the usage states the exit codes", async () => {
    const all = await runCliHere(["help"], dir);
    expect(all.code).toBe(0);
    for (const line of Object.values(FIRST_LINES)) expect(all.stdout).toContain(`\n${line}`);
    expect(all.stdout).toContain("Exit codes: 0 done; 1 the command ran and failed (or the regression gate did not pass); 2 a usage");
    for (const args of [["help", "runs"], ["runs", "--help"], ["runs", "-h"]]) {
      const one = await runCliHere(args, dir);
      expect({ args, code: one.code, stderr: one.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(one.stdout.startsWith(`Usage:\n${FIRST_LINES.runs}`)).toBe(true);
      expect(one.stdout).not.toContain(FIRST_LINES.show);
    }
    expect((await runCliHere(["help", "fly"], dir)).code).toBe(2);
  });

  it("the built command's process exits 2 for a bad number and an unknown option", async () => {
    const bad = await runBuiltCli(["runs", "--limit", "ten"], dir);
    expect({ code: bad.code, first: bad.stderr.split("\n")[0] }).toEqual({ code: 2, first: 'typelm runs: --limit expects a whole number; received "ten"' });
    const typo = await runBuiltCli(["runs", "--lmit", "3"], dir);
    expect({ code: typo.code, first: typo.stderr.split("\n")[0] }).toEqual({ code: 2, first: "typelm runs: unknown option --lmit; did you mean --limit?" });
  }, 60_000);
});

describe("the options each command takes are the ones its usage names", () => {
  it("every option the parser knows is in some command's usage, and every option a usage names is parsed", async () => {
    const { undeclaredOptions } = await import("../../lib/lab/cli/index.js");
    expect(undeclaredOptions()).toEqual({ unused: [], unparsed: [] });
  });
});
