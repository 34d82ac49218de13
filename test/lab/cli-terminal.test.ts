import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
import { runCli } from "../../lib/lab/cli/index.js";
import { closeStoreSync } from "../../lib/store/db.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cli-terminal-"));
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

const offline: NodeJS.ProcessEnv = { ...process.env, TYPELM_LM: "", OLLAMA_HOST: "http://127.0.0.1:9" };

async function cli(args: string[], cwd: string) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; }, cwd, env: offline, ollamaProbeMs: 200 });
  return { code, stdout, stderr };
}

/** Control characters a terminal acts on: C0 but the line feeds the CLI itself writes, DEL, C1, and bidirectional overrides. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Clears the screen, moves the cursor home, writes in red; then a newline that would fake another line. */
const HOSTILE = "x\u001b[2J\u001b[H\u001b[31mred\nfake line\r\u009b1m\u202eevil\u0007";
const SHOWN = "x\\x1b[2J\\x1b[H\\x1b[31mred\\nfake line\\r\\x9b1m\\u202eevil\\x07";

describe("the command line shows stored and user-supplied text with its control characters escaped", () => {
  it("typelm runs: a run name with an ESC sequence and a newline is one row, its control characters visible", async () => {
    const cwd = join(dir, "runs");
    const path = join(cwd, ".typelm/lab.sqlite");
    opened.push(path);
    const lab = LabStore.open(path);
    lab.finishRun(lab.startRun({ kind: "evaluation", name: "plain" }), { status: "completed", score: 0.5 });
    lab.startRun({ kind: "evaluation", name: HOSTILE });
    const r = await cli(["runs"], cwd);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const lines = r.stdout.trimEnd().split("\n").slice(1); // after the line naming the store
    expect(lines).toHaveLength(3); // header and two runs: the newline in the name made no row of its own
    expect(lines[1]).toContain(SHOWN);
    expect(lines[1]).toMatch(/running/);
    // The columns still line up: the status column starts at the same place on every line.
    expect(lines[1]!.indexOf("running")).toBe(lines[0]!.indexOf("status"));
    expect(lines[2]!.indexOf("completed")).toBe(lines[0]!.indexOf("status"));
  });

  it("an unknown experiment name is shown escaped on one line", async () => {
    const r = await cli(["reproduce", HOSTILE], join(dir, "unknown"));
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).toBe(`typelm reproduce: Unknown experiment "${SHOWN}": the known ones are poem-sentiment, banking77, gsm8k, restaurant8k; run a file of your own with typelm run <file>\n`);
  });

  it("an unknown command, a bad option and a bad option value are shown escaped", async () => {
    const command = await cli([HOSTILE], dir);
    expect(command.code).toBe(2);
    expect(command.stderr).not.toMatch(RAW_CONTROL);
    expect(command.stderr).toContain(`Unknown command "${SHOWN}"`);

    const option = await cli(["runs", `--${HOSTILE}`], dir);
    expect(option.code).toBe(2);
    expect(option.stderr).not.toMatch(RAW_CONTROL);
    expect(option.stderr).toContain("\\x1b[2J");

    const kind = await cli(["runs", "--kind", HOSTILE], dir);
    expect(kind.code).toBe(2);
    expect(kind.stderr.split("\n")[0]).toBe(`typelm runs: --kind expects evaluation, optimization or traces; received ${SHOWN}`);

    const extra = await cli(["runs", HOSTILE], dir);
    expect(extra.code).toBe(2);
    expect(extra.stderr).not.toMatch(RAW_CONTROL);
    // One line for the sentence (the newline in the argument shown escaped), then the usage.
    expect(extra.stderr.split("\n").slice(0, 3)).toEqual([`typelm runs: runs takes no arguments; received ${SHOWN}`, "", "Usage:"]);
  });
});
