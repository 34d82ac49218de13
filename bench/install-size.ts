/**
 * What `npm install typelm` costs a project: packs this repository (`npm pack`), installs the tarball
 * into an empty project (from the npm registry, so this needs network access to it), and prints the
 * size of node_modules with no optional package, then what each optional install adds. Checks that
 * `import "typelm"` works there before any optional package is installed.
 *
 * Run with `npm run bench:install` (after `npm run build`). Option: INSTALL_SIZE_OPTIONAL=0 skips the
 * optional installs. See bench/README.md.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = { encoding: "utf8" as const, stdio: ["ignore", "pipe", "pipe"] as ["ignore", "pipe", "pipe"], env: { ...process.env, AX_SKIP_SKILL_INSTALL: "1" } };

/** Bytes of every file under `dir` (what `du --apparent-size` counts). */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    total += entry.isDirectory() ? bytesUnder(path) : statSync(path).size;
  }
  return total;
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const work = mkdtempSync(join(tmpdir(), "typelm-install-size-"));
try {
  const tarball = execFileSync(npm, ["pack", "--silent", "--pack-destination", work], { ...quiet, cwd: root }).trim().split("\n").pop()!;
  const project = join(work, "project");
  cpSync(join(work, tarball), join(work, "typelm.tgz"));
  execFileSync("mkdir", ["-p", project]);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "empty", version: "1.0.0", private: true, type: "module" }));
  execFileSync(npm, ["install", "--no-audit", "--no-fund", join(work, "typelm.tgz")], { ...quiet, cwd: project });
  const base = bytesUnder(join(project, "node_modules"));
  const imported = execFileSync(process.execPath, ["--input-type=module", "-e", 'const m = await import("typelm"); console.log(Object.keys(m).length)'], { ...quiet, cwd: project }).trim();
  console.log(`packed tarball: ${mb(statSync(join(work, "typelm.tgz")).size)} MB`);
  console.log(`node_modules with typelm and no optional package: ${mb(base)} MB (import "typelm" works: ${imported} exports)`);
  const largest = readdirSync(join(project, "node_modules")).filter((n) => !n.startsWith("."))
    .flatMap((n) => (n.startsWith("@") ? readdirSync(join(project, "node_modules", n)).map((m) => `${n}/${m}`) : [n]))
    .map((n) => [n, bytesUnder(join(project, "node_modules", n))] as const).sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(`largest: ${largest.map(([n, b]) => `${n} ${mb(b)}`).join(", ")}`);
  if (process.env.INSTALL_SIZE_OPTIONAL !== "0") {
    const peers = Object.entries((JSON.parse(execFileSync("node", ["-p", "JSON.stringify(require('./package.json').peerDependencies)"], { ...quiet, cwd: root })) as Record<string, string>));
    const groups = [["openai"], ["@anthropic-ai/sdk"], ["ollama"], ["@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources"],
      ["ioredis"], ["vega", "vega-lite", "@resvg/resvg-js"], ["tsx"]];
    console.log("\noptional install                                   adds MB");
    for (const group of groups) {
      const copy = join(work, "copy");
      rmSync(copy, { recursive: true, force: true });
      cpSync(project, copy, { recursive: true, verbatimSymlinks: true });
      const specs = group.map((name) => `${name}@${peers.find(([n]) => n === name)?.[1] ?? "latest"}`);
      execFileSync(npm, ["install", "--no-audit", "--no-fund", ...specs], { ...quiet, cwd: copy });
      console.log(`${group.join(" ").padEnd(50)} ${mb(bytesUnder(join(copy, "node_modules")) - base).padStart(7)}`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
