#!/usr/bin/env node
// The `typelm` command (package.json "bin"). Everything it does is in cli.ts.
import { runCli } from "./cli.js";
import { printable } from "./terminal.js";

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => { process.exitCode = code; }, (error: unknown) => {
  // runCli answers every failure itself; this is the last guard, still one line and no stack trace.
  process.stderr.write(`typelm: unexpected failure: ${printable(error instanceof Error ? error.message : String(error))}\n`);
  process.exitCode = 1;
});
