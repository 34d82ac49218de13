/**
 * A project that installed typelm and nothing optional: node_modules/typelm is a COPY of what
 * `npm pack` ships (package.json and whatever its "files" lists, taken from the repository, so it
 * follows the build wherever it puts dist/), beside symlinks to only the required dependencies
 * (package.json "dependencies" and required "peerDependencies", minus the optional packages of
 * lib/optional.ts). A symlinked package resolves its own dependencies from its real path, in the
 * repository's node_modules; typelm itself resolves only what is in the project. Scripts run in
 * child Node processes there.
 *
 * Needs `npm run build` first (as test/api does).
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { OPTIONAL_PACKAGES } from "../../lib/optional-packages.js";

export const REPO = resolve(import.meta.dirname, "../..");

interface PackageJson {
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function repoPackageJson(): PackageJson {
  return JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as PackageJson;
}

/** The packages a bare install has: required dependencies and required peers, never an optional package. */
export function requiredDependencies(): string[] {
  const pkg = repoPackageJson();
  const optional = new Set<string>(Object.keys(OPTIONAL_PACKAGES));
  const peers = Object.keys(pkg.peerDependencies ?? {}).filter((name) => pkg.peerDependenciesMeta?.[name]?.optional !== true);
  return [...new Set([...Object.keys(pkg.dependencies ?? {}), ...peers])].filter((name) => !optional.has(name)).sort();
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface BareInstall {
  /** The project folder (its node_modules holds typelm and the links). */
  dir: string;
  /** node_modules/typelm. */
  typelm: string;
  /** Symlinks a package from the repository's node_modules into the project ("it is installed now"). */
  link(name: string): void;
  /** Removes a package's link. */
  unlink(name: string): void;
  /** Runs an ES module script (top-level await allowed) with Node in the project folder. */
  run(script: string, env?: NodeJS.ProcessEnv): Promise<RunResult>;
  /** Runs `node <args>` in the project folder. */
  node(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<RunResult>;
  remove(): void;
}

/** Environment for child processes: no model, no Ollama, no OpenTelemetry or vendor settings from outside. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(OTEL_|LANGFUSE_|NEW_RELIC_|OPENAI_|ANTHROPIC_|OLLAMA_|TYPELM_|NODE_OPTIONS$|NODE_PATH$|JEST_)/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, TYPELM_LM: "", OLLAMA_HOST: "http://127.0.0.1:9", ...extra };
}

/**
 * Makes the project. `without` leaves out required dependencies too (e.g. "@opentelemetry/api", to
 * show that importing typelm does not load it). `from` is a folder holding the package as npm unpacks
 * it (an extracted `npm pack` tarball's package/ folder), copied as it is instead of the repository's files.
 */
export function bareInstall(options: { without?: readonly string[]; from?: string } = {}): BareInstall {
  const pkg = repoPackageJson();
  if (options.from === undefined && !existsSync(join(REPO, "dist"))) throw new Error(`${REPO}/dist is missing: run npm run build first`);
  const dir = mkdtempSync(join(tmpdir(), "typelm-bare-"));
  const modules = join(dir, "node_modules");
  const typelm = join(modules, "typelm");
  mkdirSync(typelm, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bare-consumer", private: true, type: "module" }));
  if (options.from !== undefined) {
    cpSync(options.from, typelm, { recursive: true });
  } else {
    // What npm pack ships: package.json always, then each "files" entry (plain paths only here).
    cpSync(join(REPO, "package.json"), join(typelm, "package.json"));
    for (const entry of pkg.files ?? []) {
      if (/[*?{}[\]!]/.test(entry)) throw new Error(`bare-install copies plain paths only; package.json "files" has the pattern ${entry}`);
      const from = join(REPO, entry);
      if (!existsSync(from)) throw new Error(`package.json "files" lists ${entry}, which does not exist: run npm run build first`);
      cpSync(from, join(typelm, entry), { recursive: true });
    }
  }
  const link = (name: string): void => {
    const target = join(REPO, "node_modules", name);
    if (!existsSync(target)) throw new Error(`${name} is not in the repository's node_modules`);
    const at = join(modules, name);
    if (existsSync(at)) return;
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(target, at, "dir");
  };
  const without = new Set(options.without ?? []);
  for (const name of requiredDependencies()) if (!without.has(name)) link(name);

  const node = (args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> =>
    new Promise((done) => {
      execFile(process.execPath, [...args], { cwd: dir, env: cleanEnv(env), maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : 1;
        done({ code, stdout, stderr });
      });
    });
  let scripts = 0;
  return {
    dir,
    typelm,
    link,
    unlink: (name) => rmSync(join(modules, name), { force: true }),
    node,
    run: (script, env) => {
      const file = join(dir, `script-${++scripts}.mjs`);
      writeFileSync(file, script);
      return node([file], env);
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
