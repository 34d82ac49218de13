#!/usr/bin/env node
// The `typelm` command (package.json "bin"). Everything it does is in cli.ts.
import { runCli } from "./index.js";
import { pendingWaits } from "../experiment/pending.js";
import { printable } from "../terminal.js";

const argv = process.argv.slice(2);
let finished = false;

/**
 * Node ends a process whose event loop is empty even while a promise is still awaited: an experiment
 * file whose top-level await never settles would end the command with exit code 0 and no word. Here
 * the process is about to end with the command unfinished: say what it was waiting for, and fail.
 */
process.on("beforeExit", () => {
  if (finished) return;
  finished = true;
  const waits = pendingWaits();
  const what = waits.length > 0
    ? `it was waiting for ${waits[waits.length - 1]}, and nothing is left that could end the wait`
    : "it was waiting for a promise that nothing is left to settle (please report this with the command you ran)";
  process.stderr.write(`typelm${commandOf(argv)}: stopped before it finished: ${printable(what)}\n`);
  process.exitCode = 1;
});

runCli(argv, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => {
  finished = true;
  process.exitCode = code;
  // A failed command ends now, not when what it left behind ends (a model call past the check's timeout).
  if (code !== 0) exitOnceWritten(code);
}, (error: unknown) => {
  finished = true;
  // runCli answers every failure itself; this is the last guard, still one line and no stack trace.
  process.stderr.write(`typelm: unexpected failure: ${printable(error instanceof Error ? error.message : String(error))}\n`);
  process.exitCode = 1;
  exitOnceWritten(1);
});

/** Exits once standard output and error have taken everything written to them. */
function exitOnceWritten(code: number): void {
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

/** " run" for `typelm run ...`: the first argument that is not an option or an option's value. */
function commandOf(args: readonly string[]): string {
  const withValue = new Set(["--lm", "--limit", "--seed", "--out", "--kind"]);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (withValue.has(arg)) i++;
    else if (!arg.startsWith("-")) return ` ${printable(arg)}`;
  }
  return "";
}
