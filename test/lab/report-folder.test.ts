import { afterAll, describe, expect, it } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, Predict, defineExperiment } from "../../lib/index.js";
import { REPORT_LOCK, takeReportFolder, writeAtomic } from "../../lib/lab/report/folder.js";
import { runAndReport } from "../../lib/lab/experiment/reproduce.js";
import { runBuiltCli } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-report-folder-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SIGNATURE = {
  name: "Mood", description: "Say whether a line is happy or sad.",
  input: { line: { type: "string" } }, output: { label: { type: "enum", values: ["happy", "sad"] } },
};

/** A project folder with a small dataset, and an experiment on it (no optimizer: the run takes a moment). */
function project(name: string) {
  const cwd = join(dir, name);
  mkdirSync(join(cwd, "data"), { recursive: true });
  writeFileSync(join(cwd, "data", "signature.json"), JSON.stringify(SIGNATURE));
  const rows = [["the sun is warm", "happy"], ["the rain will not stop", "sad"], ["we laughed", "happy"], ["an empty house", "sad"]];
  for (const split of ["train", "dev", "test"]) {
    writeFileSync(join(cwd, "data", `${split}.jsonl`), rows.map(([line, label], i) => JSON.stringify({ id: `${split}-${i}`, line, label })).join("\n") + "\n");
  }
  const definition = defineExperiment({ name: "mood", dataset: "./data", program: ({ signature }) => new Predict(signature), optimizer: "none" });
  const run = (seed = 0) => runAndReport({ definition, dir: cwd, file: join(cwd, "mood.ts"), sha256: "0".repeat(64) }, {
    cwd, seed, env: { OLLAMA_HOST: "http://127.0.0.1:9" }, ollamaProbeMs: 50,
  });
  return { cwd, report: join(cwd, "reports", "mood"), run };
}

/** A process that stays alive until killed, and its exit. */
function sleeper() {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { pid: child.pid!, stop: async () => { child.kill("SIGKILL"); await exited; } };
}

describe("report files are replaced, never written through a symbolic link", () => {
  it("report.md and results.json linking to files outside the folder: the victims are unchanged, the report files are regular files", async () => {
    const { cwd, report, run } = project("links");
    const victim = join(cwd, "victim.txt");
    const otherVictim = join(cwd, "other-victim.json");
    writeFileSync(victim, "precious text\n");
    writeFileSync(otherVictim, "{\"precious\":true}\n");
    mkdirSync(report, { recursive: true });
    symlinkSync("../../victim.txt", join(report, "report.md"));
    symlinkSync(otherVictim, join(report, "results.json"));
    // A dangling link: following it would create a file where it points.
    symlinkSync(join(cwd, "planted.png"), join(report, "metrics.png"));

    await run();

    expect(readFileSync(victim, "utf8")).toBe("precious text\n");
    expect(readFileSync(otherVictim, "utf8")).toBe("{\"precious\":true}\n");
    expect(existsSync(join(cwd, "planted.png"))).toBe(false);
    for (const name of ["report.md", "results.json", "metrics.png"]) expect([name, lstatSync(join(report, name)).isFile()]).toEqual([name, true]);
    expect(readFileSync(join(report, "report.md"), "utf8")).toContain("Seed 0");
    expect(JSON.parse(readFileSync(join(report, "results.json"), "utf8")).experiment).toBe("mood");
    expect(readdirSync(report).filter((f) => f.startsWith("."))).toEqual([]);
  }, 60_000);

  it("writeAtomic leaves no temporary file behind, and a failure is a ConfigurationError naming the file", () => {
    const folder = join(dir, "atomic");
    mkdirSync(folder);
    writeAtomic(folder, "a.txt", "one");
    writeAtomic(folder, "a.txt", "two");
    expect(readdirSync(folder)).toEqual(["a.txt"]);
    expect(readFileSync(join(folder, "a.txt"), "utf8")).toBe("two");
    mkdirSync(join(folder, "taken"));
    writeFileSync(join(folder, "taken", "inside"), "x");
    expect(() => writeAtomic(folder, "taken", "three")).toThrow(ConfigurationError);
    expect(() => writeAtomic(folder, "taken", "three")).toThrow(`Cannot write ${join(folder, "taken")}:`);
    expect(readdirSync(folder).sort()).toEqual(["a.txt", "taken"]);
  });
});

describe("one run at a time writes a report folder", () => {
  it("a second run for the same folder, while the first is under way, is refused at once and the folder holds the first run's files", async () => {
    const { report, run } = project("same-process");
    const first = run(2);
    await expect(run(4)).rejects.toThrow(`Another typelm run (process ${process.pid}) is writing its report to ${report}: wait for it to finish, or write this one elsewhere with --out DIR`);
    await first;
    expect(JSON.parse(readFileSync(join(report, "results.json"), "utf8")).seed).toBe(2);
    expect(readFileSync(join(report, "report.md"), "utf8")).toContain("- Seed 2;");
    expect(existsSync(join(report, REPORT_LOCK))).toBe(false);
    // Once the first has finished, the next run takes the folder.
    await run(4);
    expect(JSON.parse(readFileSync(join(report, "results.json"), "utf8")).seed).toBe(4);
  }, 60_000);

  it("a lock held by another live process refuses the run before it starts; a dead process's lock is taken over", async () => {
    const { report, run } = project("other-process");
    mkdirSync(report, { recursive: true });
    const other = sleeper();
    try {
      writeFileSync(join(report, REPORT_LOCK), JSON.stringify({ pid: other.pid, host: hostname() }));
      await expect(run()).rejects.toThrow(`Another typelm run (process ${other.pid}) is writing its report to ${report}`);
      expect(existsSync(join(report, "results.json"))).toBe(false);
    } finally {
      await other.stop();
    }
    // The process is gone (killed with SIGKILL, as a crashed run): its lock no longer holds the folder.
    await run();
    expect(existsSync(join(report, "results.json"))).toBe(true);
    expect(existsSync(join(report, REPORT_LOCK))).toBe(false);
  }, 60_000);

  it("a run that fails leaves no lock, and no empty folder it made", async () => {
    const folder = join(dir, "made", "reports", "x");
    const taken = takeReportFolder(folder);
    expect(existsSync(join(folder, REPORT_LOCK))).toBe(true);
    expect(() => takeReportFolder(folder)).toThrow(ConfigurationError);
    taken.release();
    // reports/x and the reports/ made for it are gone; the folder that was there before stays.
    expect(existsSync(join(dir, "made", "reports"))).toBe(false);
    expect(existsSync(join(dir, "made"))).toBe(false);
    mkdirSync(join(dir, "kept"));
    takeReportFolder(join(dir, "kept", "reports", "y")).release();
    expect(readdirSync(join(dir, "kept"))).toEqual([]);
  });

  it("two typelm reproduce started together on one folder: every file in it comes from one run", async () => {
    const cwd = join(dir, "two-cli");
    mkdirSync(cwd);
    const [a, b] = await Promise.all([2, 4].map((seed) => runBuiltCli(["reproduce", "poem-sentiment", "--limit", "6", "--seed", String(seed)], cwd)));
    const outcomes = [a!, b!];
    expect(outcomes.some((r) => r.code === 0)).toBe(true);
    for (const r of outcomes.filter((o) => o.code !== 0)) expect(r.stderr).toMatch(/^typelm reproduce: Another typelm run \(process \d+\) is writing its report to /);
    const report = join(cwd, "reports", "poem-sentiment");
    const seed = JSON.parse(readFileSync(join(report, "results.json"), "utf8")).seed as number;
    expect(readFileSync(join(report, "report.md"), "utf8")).toContain(`- Seed ${seed}, --limit 6;`);
    expect(readdirSync(report).filter((f) => f.startsWith("."))).toEqual([]);
  }, 120_000);
});
