/**
 * `npx typelm view` in a project that installed typelm: npx runs the command through `sh -c` and
 * passes SIGTERM on to that shell only. Killing npx must not leave the viewer listening: the port is
 * closed and the viewer's process gone. Needs the built command (npm run build) and npm's npx beside
 * Node; offline (the command is installed in the project, nothing is fetched).
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildFixture, removeFixtures } from "./fixture.js";

const NPX = join(dirname(process.execPath), "npx");
const folders: string[] = [];

afterAll(() => {
  removeFixtures();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

/** A project whose node_modules holds typelm (a link to this repository) and its `typelm` command. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "typelm-npx-"));
  folders.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "npx-view", version: "1.0.0", private: true, dependencies: { typelm: "*" } }));
  mkdirSync(join(dir, "node_modules/.bin"), { recursive: true });
  symlinkSync(process.cwd(), join(dir, "node_modules/typelm"));
  symlinkSync("../typelm/dist/pkg/bin.js", join(dir, "node_modules/.bin/typelm"));
  return dir;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => { socket.destroy(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

/** The ids of processes whose command line holds `text` (Linux's /proc). */
function processesWith(text: string): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => {
    try {
      return readFileSync(`/proc/${d}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  }).map(Number);
}

const run = existsSync(NPX) && existsSync("/proc") ? describe : describe.skip;

run("npx typelm view", () => {
  it("stops listening when npx is sent SIGTERM", async () => {
    const fixture = await buildFixture();
    const cwd = project();
    const env = { ...process.env, npm_config_update_notifier: "false", npm_config_audit: "false", npm_config_fund: "false", npm_config_offline: "true" };
    const npx: ChildProcess = spawn(NPX, ["typelm", "view", "--store", fixture.path, "--port", "0"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    npx.stderr!.on("data", (d: Buffer) => { stderr += d.toString(); });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        npx.stdout!.on("data", (d: Buffer) => {
          stdout += d.toString();
          const m = /typelm view: (http:\/\/\S+)/.exec(stdout);
          if (m) resolve(m[1]!);
        });
        npx.once("exit", (code) => reject(new Error(`npx exited with ${code}: ${stderr}`)));
      });
      const port = Number(new URL(url).port);
      expect((await fetch(url)).status).toBe(200);
      expect(processesWith(fixture.path).length).toBeGreaterThan(0);
      const exited = new Promise<void>((resolve) => npx.once("exit", () => resolve()));
      npx.kill("SIGTERM");
      await exited;
      // The viewer notices within a second or so; waited on for up to 60 s (a loaded machine).
      let open = true;
      for (let i = 0; i < 600 && open; i++) {
        open = await listening(port);
        if (open) await new Promise((r) => setTimeout(r, 100));
      }
      expect(open).toBe(false);
      for (let i = 0; i < 600 && processesWith(fixture.path).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(processesWith(fixture.path)).toEqual([]);
    } finally {
      npx.kill("SIGKILL");
      // A viewer left behind (the failure this test is about) is ended here, by its own id.
      for (const pid of processesWith(fixture.path)) process.kill(pid, "SIGKILL");
    }
  }, 120000);
});
