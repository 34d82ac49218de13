/**
 * `typelm view` on the command line: it prints the address it serves on 127.0.0.1, answers there,
 * stops cleanly on SIGTERM, and rejects bad options with a message; `import "typelm"` never reaches
 * the viewer's code. The built command needs `npm run build` first (CI does).
 */
import { describe, expect, it } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BIN, runCliHere } from "../helpers/cli.js";
import { buildFixture } from "./fixture.js";

describe("typelm view", () => {
  it("prints its address on 127.0.0.1, serves the runs there, and stops on SIGTERM", async () => {
    const fixture = await buildFixture();
    const child = spawn(process.execPath, [BIN, "view", "--store", fixture.path, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const m = /typelm view: (http:\/\/\S+)/.exec(stdout);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`typelm view exited with ${code}: ${stderr}`)));
    });
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`data-run-id="${fixture.evalA}"`);
      // A name other than the loopback's (DNS rebinding) is refused.
      const port = new URL(url).port;
      const { request } = await import("node:http");
      const status = await new Promise<number>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path: "/", headers: { host: `attacker.example:${port}` } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); })
          .on("error", reject).end();
      });
      expect(status).toBe(403);
    } finally {
      const exited = new Promise<unknown>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
      child.kill("SIGTERM");
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(stderr).toContain(`Serving ${fixture.path} read-only`);
    }
  }, 30000);

  it("names what is wrong with its options", async () => {
    const cwd = dirname((await buildFixture()).path);
    let out = await runCliHere(["view", "--port", "http"], cwd);
    expect(out).toMatchObject({ code: 1 });
    expect(out.stderr).toContain('--port expects a whole number; received "http"');
    out = await runCliHere(["view", "--port", "70000"], cwd);
    expect(out.stderr).toContain("--port expects a port number 0-65535; received 70000");
    out = await runCliHere(["view", "--store", "missing.sqlite"], cwd);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`no lab store at ${join(cwd, "missing.sqlite")}`);
    out = await runCliHere(["runs", "--port", "5000"], cwd);
    expect(out.stderr).toContain("--store, --port and --host go with typelm view");
    out = await runCliHere(["view", "extra"], cwd);
    expect(out.stderr).toContain("view takes no arguments");
  });

  it("import \"typelm\" loads no module that holds the viewer's code", () => {
    // The bundle's entry and the chunks it imports statically (what Node loads at import); the viewer
    // may sit only in chunks reached through a dynamic import().
    const root = join(process.cwd(), "dist/pkg");
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file) || !existsSync(file)) return;
      seen.add(file);
      const code = readFileSync(file, "utf8");
      for (const m of code.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.[^"]+)"|^import\s*"(\.[^"]+)"/gm)) visit(join(dirname(file), m[1] ?? m[2]!));
    };
    visit(join(root, "index.js"));
    expect(seen.size).toBeGreaterThan(0);
    const withViewer = [...seen].filter((f) => /\bViewStore = class\b|class ViewStore\b|typelm view: /.test(readFileSync(f, "utf8")));
    expect(withViewer).toEqual([]);
    // The command's chunk graph does hold it (so the search above would find it if it were eager).
    const all = [...new Set([join(root, "bin.js")])];
    const binSeen = new Set<string>();
    const visitAll = (file: string) => {
      if (binSeen.has(file) || !existsSync(file)) return;
      binSeen.add(file);
      for (const m of readFileSync(file, "utf8").matchAll(/"(\.\.?\/[^"]+\.js)"/g)) visitAll(join(dirname(file), m[1]!));
    };
    all.forEach(visitAll);
    expect([...binSeen].some((f) => /\bViewStore = class\b|class ViewStore\b/.test(readFileSync(f, "utf8")))).toBe(true);
  });
});
