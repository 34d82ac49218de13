/**
 * What a fresh clone packs: the repository's files as `git clone` gives them (tracked and new files,
 * nothing that .gitignore leaves out, so no dist/), with node_modules linked to the repository's. The
 * real `npm pack` runs there: package.json's `prepack` builds before the file list is taken, and the
 * tarball, unpacked into a project holding only typelm's required dependencies
 * (test/helpers/bare-install.ts), imports and runs. `prepare` (what `npm install` from a git URL and
 * `npm ci` in a clone run) builds only when there is no build yet.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO, bareInstall, cleanEnv, type BareInstall } from "../helpers/bare-install.js";

interface Manifest {
  main: string;
  bin: Record<string, string>;
  types: string;
  exports: Record<string, { types: string; default: string }>;
}

/** The environment of an npm command run by hand: nothing inherited from an npm script running jest. */
function npmEnv(): NodeJS.ProcessEnv {
  const env = cleanEnv();
  for (const name of Object.keys(env)) if (/^npm_/i.test(name)) delete env[name];
  return env;
}

function npm(args: readonly string[], cwd: string): string {
  const r = spawnSync("npm", [...args], { cwd, env: npmEnv(), encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 420_000 });
  if (r.status !== 0) throw new Error(`npm ${args.join(" ")} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

let work: string;
let clone: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "typelm-pack-"));
  clone = join(work, "clone");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: REPO, encoding: "utf8" })
    .split("\0").filter((f) => f !== "" && f !== "node_modules" && existsSync(join(REPO, f)));
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(REPO, file), join(clone, file));
  }
  symlinkSync(join(REPO, "node_modules"), join(clone, "node_modules"), "dir");
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm pack in a fresh clone", () => {
  let packed: { filename: string; size: number; entryCount: number; files: { path: string }[] };
  let bare: BareInstall | undefined;
  afterAll(() => bare?.remove());

  test("the clone has no build; npm pack builds first and ships every file package.json points to", () => {
    expect(existsSync(join(clone, "package.json"))).toBe(true);
    expect(existsSync(join(clone, "dist"))).toBe(false);
    packed = (JSON.parse(npm(["pack", "--json", "--pack-destination", work], clone)) as (typeof packed)[])[0]!;
    const paths = new Set(packed.files.map((f) => f.path));
    const manifest = JSON.parse(execFileSync("node", ["-p", "JSON.stringify(require('./package.json'))"], { cwd: clone, encoding: "utf8" })) as Manifest;
    const pointed = [manifest.main, manifest.types, ...Object.values(manifest.bin), ...Object.values(manifest.exports).flatMap((e) => [e.types, e.default])]
      .map((p) => p.replace(/^\.\//, ""));
    expect(pointed.filter((p) => !paths.has(p))).toEqual([]);
    expect([...paths].filter((p) => p.startsWith("dist/pkg/chunks/")).length).toBeGreaterThan(0);
    expect([...paths].filter((p) => p.startsWith("dist/types/")).length).toBeGreaterThan(50);
    // tsc's JavaScript in dist/lib is for the repository's own scripts, not shipped.
    expect([...paths].filter((p) => p.startsWith("dist/lib/"))).toEqual([]);
  }, 450_000);

  test("ships no source map, nor a file pointing to one, and is the size the README gives", () => {
    expect(packed).toBeDefined();
    // A map (823 kB for the main chunk) was most of the tarball; a sourceMappingURL to a map not shipped makes bundlers warn.
    expect(packed.files.map((f) => f.path).filter((p) => p.endsWith(".map"))).toEqual([]);
    const unpacked = join(work, "listed");
    mkdirSync(unpacked);
    execFileSync("tar", ["-xzf", join(work, packed.filename), "-C", unpacked]);
    const pointing = packed.files.map((f) => f.path).filter((p) => /\.(c|m)?js$/.test(p) && readFileSync(join(unpacked, "package", p), "utf8").includes("//# sourceMappingURL="));
    expect(pointing).toEqual([]);
    // "The tarball is 0.8 MB": the README's figure is this tarball's size to 0.1 MB.
    const claimed = /The tarball is ([\d.]+) MB/.exec(readFileSync(join(REPO, "README.md"), "utf8"));
    expect(claimed).not.toBeNull();
    expect(Math.abs(packed.size / 1e6 - Number(claimed![1]))).toBeLessThanOrEqual(0.1);
  });

  test("the tarball npm pack leaves in a clone is ignored by git", () => {
    expect(packed).toBeDefined();
    // The README packs in the clone's root: `git status` must not list typelm-<version>.tgz.
    const r = spawnSync("git", ["check-ignore", "--quiet", "--no-index", packed.filename], { cwd: REPO });
    expect(r.status).toBe(0);
  });

  test("the tarball, unpacked into a project, imports by name and runs the typelm command", async () => {
    expect(packed).toBeDefined();
    const unpacked = join(work, "unpacked");
    mkdirSync(unpacked);
    execFileSync("tar", ["-xzf", join(work, packed.filename), "-C", unpacked]);
    bare = bareInstall({ from: join(unpacked, "package") });
    const r = await bare.run(`
const a = await import("typelm"); const b = await import("typelm/testing"); const c = await import("typelm/notebook");
console.log(JSON.stringify([typeof a.Predict, typeof b.ScriptedLM, typeof c.display.metrics]));`);
    expect(r).toEqual({ code: 0, stdout: `${JSON.stringify(["function", "function", "function"])}\n`, stderr: "" });
    const help = await bare.node(["node_modules/typelm/dist/pkg/bin.js", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("typelm run <experiment file>");
  }, 60_000);
});

describe("prepare (npm ci in a clone, npm install from a git URL)", () => {
  test("builds when there is no build and leaves an existing build alone", () => {
    const index = join(clone, "dist/pkg/index.js");
    rmSync(join(clone, "dist"), { recursive: true, force: true });
    npm(["run", "prepare", "--silent"], clone);
    expect(existsSync(index)).toBe(true);
    expect(existsSync(join(clone, "dist/types/index.d.ts"))).toBe(true);
    const built = statSync(index).mtimeMs;
    npm(["run", "prepare", "--silent"], clone);
    expect(statSync(index).mtimeMs).toBe(built);
  }, 450_000);
});
