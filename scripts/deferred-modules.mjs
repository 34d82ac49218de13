/**
 * Modules the bundle loads at their first call instead of at `import "typelm"` (used by scripts/bundle.mjs).
 *
 * Start-up time follows the amount of code `import "typelm"` parses, and much of the library is code a
 * program reaches only through synchronous functions it may never call: the statistics behind compare()
 * and report.ci, the lab store's rows and migrations, the optimizers' planning. Those functions cannot
 * become async without changing the public API, so the bundle keeps their callers as they are and
 * moves the modules that hold them out of the eager chunk: each module listed in DEFERRED is built alone
 * as CommonJS, dist/pkg/deferred/<path>.cjs, and the main build reads every import of it as a stand-in
 * module instead: for each function it exports, a function of the same name that loads the module the
 * first time it is called (`requireDeferred` in lib/load-sync.ts) and calls through; one stand-in per
 * function in the whole bundle, so each keeps its name. CommonJS because `require` is the one
 * synchronous loader everywhere the package runs: jest's module registry refuses to `require` ES modules.
 * A deferred module's own imports of library modules and of zod are answered from the eager chunk (the
 * host module below), so it works on the same classes, configuration and event bus as the rest. The
 * sources are unchanged: jest and dist/lib run them as written.
 *
 * What is checked at build time, so a change cannot make this wrong silently:
 * - only functions are imported from a deferred module (a class, an object or a namespace cannot be
 *   stood in for by a function), or constants written as a number, string or boolean, which the stand-in
 *   module holds a copy of: anything else fails the build (No matching export in "deferred:lib/...");
 * - a deferred module has no top-level statement that runs code for its effect (registering itself
 *   somewhere, for instance), since that would now happen at its first call instead of at import;
 * - a deferred module imports library modules and packages by name only, and does not use import.meta.
 * test/package/deferred.test.ts checks at run time that `import "typelm"` loads none of them and that
 * each one loads and works through the bundle.
 */
import { build, transform } from "esbuild";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";

/** Library modules (paths from the repository root) built as dist/pkg/deferred/<path without lib/>.cjs. */
export const DEFERRED = [
  "lib/module-state.ts",
  "lib/lm/failure.ts",
  "lib/lm/stream-text.ts",
  "lib/stream/reply-tap.ts",
  "lib/testing/reply.ts",
  "lib/lm/reasoning.ts",
  "lib/predict/agent-signature.ts",
  "lib/predict/agent-options.ts",
  "lib/batch/settings.ts",
  "lib/evaluate/metric.ts",
  "lib/signature/baml.ts",
  "lib/signature/toon-schema.ts",
  "lib/prompt/toon-data.ts",
  "lib/convert/dates.ts",
  "lib/instrument/logger.ts",
  "lib/convert/union.ts",
  "lib/evaluate/stats/binomial.ts",
  "lib/evaluate/stats/bootstrap.ts",
  "lib/evaluate/stats/f1-statistic.ts",
  "lib/evaluate/stats/holm.ts",
  "lib/evaluate/stats/mcnemar.ts",
  "lib/evaluate/stats/mde.ts",
  "lib/evaluate/stats/metric-interval.ts",
  "lib/evaluate/stats/normal.ts",
  "lib/evaluate/stats/paired-difference.ts",
  "lib/evaluate/stats/permutation.ts",
  "lib/evaluate/stats/share-interval.ts",
  "lib/evaluate/stats/statistic.ts",
  "lib/evaluate/stats/test-inversion.ts",
  "lib/store/lab-rows.ts",
  "lib/store/migrations.ts",
  "lib/lab/experiment/define.ts",
  "lib/evaluate/compare.ts",
  "lib/instrument/otel-spans.ts",
  "lib/store/db.ts",
  "lib/instrument/vendors.ts",
  "lib/store/stored-calls.ts",
  "lib/tools/arithmetic.ts",
  "lib/instrument/otel-export.ts",
  "lib/mcp/schema-to-zod.ts",
  "lib/store/media/refs.ts",
  "lib/media/refs.ts",
  "lib/evaluate/fields.ts",
  "lib/optimize/estimate.ts",
  "lib/optimize/options.ts",
  "lib/optimize/examples.ts",
  "lib/evaluate/metrics.ts",
  "lib/store/media/tables.ts",
  "lib/optimize/gepa/reflection-prompt.ts",
  "lib/optimize/gepa/budget.ts",
  "lib/judge/calibrate.ts",
  "lib/store/annotations/schema.ts",
  "lib/evaluate/rescore.ts",
  "lib/evaluate/predictor-models.ts",
  "lib/optimize/budget.ts",
  "lib/optimize/gepa/gepa-plan.ts",
  "lib/optimize/simple-impl.ts",
  "lib/judge/judge-impl.ts",
  "lib/judge/pairwise-impl.ts",
  "lib/judge/judge-predict.ts",
  "lib/evaluate/report-impl.ts",
  "lib/evaluate/evaluation-settings.ts",
  "lib/evaluate/timeout.ts",
  "lib/store/pg-lab-store.ts",
  "lib/store/lab-store-impl.ts",
  "lib/store/registry/registry-impl.ts",
  "lib/tools/memory-toolset-impl.ts",
  "lib/store/store-kind.ts",
  "lib/tools/tool-checks.ts",
  "lib/memory/build-manager.ts",
  "lib/memory/record.ts",
  "lib/memory/in-memory-store-impl.ts",
  "lib/predict/agent-base-setup.ts",
  "lib/predict/react-setup.ts",
  "lib/predict/codeact-setup.ts",
  "lib/predict/program-of-thought-setup.ts",
  "lib/predict/chain-of-thought-setup.ts",
  "lib/media/media-impl.ts",
  "lib/media/sniff.ts",
  "lib/media/label.ts",
  "lib/lm/cache-impl.ts",
  "lib/optional-packages.ts",
  "lib/signature/temporal-fields.ts",
];

/** The name a deferred module is built and required under: its path in lib/ without the extension. */
export function deferredName(path) {
  return path.replace(/^lib\//, "").replace(/\.ts$/, "");
}

/** Entry points for esbuild: `deferred/<name>` → source. */
export function deferredEntries() {
  return Object.fromEntries(DEFERRED.map((p) => [`deferred/${deferredName(p)}`, p]));
}

function parseJs(file, code) {
  return ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
}

async function toJs(file, source) {
  const hashbang = source.startsWith("#!") ? source.slice(0, source.indexOf("\n") + 1) : "";
  const { code } = await transform(source.slice(hashbang.length), { loader: "ts", format: "esm", target: "node20", sourcefile: file });
  return { hashbang, code };
}

function hasModifier(node, kind) {
  return (ts.canHaveModifiers(node) ? ts.getModifiers(node) ?? [] : []).some((m) => m.kind === kind);
}

/**
 * What a deferred module exports that an importer can stand in for (functions by name, constants written
 * as literals) and what it imports by value (`imports`: module → names), after checking that its top
 * level only declares: imports, exports, functions, classes, variables. An expression statement at the
 * top level runs for its effect, which deferring would postpone.
 */
async function analyze(root, path) {
  const { code } = await toJs(path, readFileSync(join(root, path), "utf8"));
  const sf = parseJs(path, code);
  const functions = new Set();
  const literals = new Map();
  const exported = new Map();
  const imports = new Map();
  const fail = (what) => new Error(`${path} is deferred (scripts/deferred-modules.mjs) but ${what}`);
  const importKey = (specifier) => {
    const key = specifier.startsWith(".") ? resolveSpecifier(root, join(root, path), specifier) : specifier;
    if (key === undefined) throw fail(`imports ${specifier}, which is not a library module`);
    return key;
  };
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st) && (st.declarationList.flags & ts.NodeFlags.Const) !== 0) {
      for (const d of st.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.initializer && isLiteral(d.initializer)) literals.set(d.name.text, d.initializer.getText(sf));
        if (ts.isIdentifier(d.name) && hasModifier(st, ts.SyntaxKind.ExportKeyword)) exported.set(d.name.text, d.name.text);
      }
    }
    if (ts.isFunctionDeclaration(st) && st.name) {
      functions.add(st.name.text);
      if (hasModifier(st, ts.SyntaxKind.ExportKeyword)) exported.set(st.name.text, st.name.text);
    } else if (ts.isImportDeclaration(st)) {
      const specifier = st.moduleSpecifier.text;
      const bindings = st.importClause?.namedBindings;
      if (specifier.startsWith("node:")) continue;
      if (!st.importClause || st.importClause.name || (bindings && !ts.isNamedImports(bindings))) {
        throw fail(`imports ${specifier} other than by name: ${st.getText(sf).slice(0, 120)}`);
      }
      const key = importKey(specifier);
      const names = imports.get(key) ?? new Set();
      for (const e of bindings?.elements ?? []) names.add((e.propertyName ?? e.name).text);
      imports.set(key, names);
    } else if (ts.isExportDeclaration(st)) {
      if (!st.exportClause || !ts.isNamedExports(st.exportClause)) throw fail(`re-exports everything: ${st.getText(sf).slice(0, 120)}`);
      if (st.moduleSpecifier) {
        const key = importKey(st.moduleSpecifier.text);
        const names = imports.get(key) ?? new Set();
        for (const e of st.exportClause.elements) names.add((e.propertyName ?? e.name).text);
        imports.set(key, names);
        continue;
      }
      for (const e of st.exportClause.elements) exported.set(e.name.text, (e.propertyName ?? e.name).text);
    } else if (ts.isExpressionStatement(st)) {
      throw fail(`runs code at its top level: ${st.getText(sf).slice(0, 120)}`);
    } else if (!(ts.isClassDeclaration(st) || ts.isVariableStatement(st) || ts.isEmptyStatement(st))) {
      throw fail(`has a top-level ${ts.SyntaxKind[st.kind]}`);
    }
  }
  if (/\bimport\.meta\b/.test(code)) throw fail("uses import.meta, which its CommonJS build has not");
  // Modules it loads with import(): the host loads them, from the main build's lazy chunks.
  const lazy = new Set([...code.matchAll(LAZY_IMPORT)].map((m) => importKey(m[1])));
  const exports = new Map();
  for (const [name, local] of exported) {
    if (functions.has(local)) exports.set(name, { function: true });
    else if (literals.has(local)) exports.set(name, { literal: literals.get(local) });
  }
  return { exports, imports, lazy };
}

/** `import("./x.js")` in a module's JavaScript (its types removed, so no `typeof import(...)`). */
const LAZY_IMPORT = /\bimport\(\s*"(\.[^"]+)"\s*\)/g;

/** A number, string or boolean written out: a constant an importer can hold a copy of. */
function isLiteral(node) {
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) return ts.isNumericLiteral(node.operand);
  return ts.isNumericLiteral(node) || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ||
    node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword;
}

/** `./x.js` imported from `from` → the library path `lib/…/x.ts` (repository-relative), if it is one. */
function resolveSpecifier(root, from, specifier) {
  if (!specifier.startsWith(".")) return undefined;
  const base = join(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), join(base, "index.ts")]) {
    if (existsSync(candidate)) return relative(root, candidate);
  }
  return undefined;
}

/**
 * The deferred modules analysed, for scripts/bundle.mjs:
 * - `target(importer, specifier)` and `standIns(key)`: which imports name a deferred module, and the
 *   module the main build reads in its place (an import of anything else from it, a class or an object,
 *   fails the build: "No matching export in "deferred:lib/…"");
 * - `hostModule()`: the code of the module the main build appends to the library index, which hands the
 *   deferred modules what they import (library modules' exports, zod) from the eager chunk, so a
 *   deferred module works on the same classes, configuration and event bus as the rest;
 * - `buildModules(outdir, options)`: builds each deferred module alone as dist/pkg/deferred/<name>.cjs.
 */
export async function deferredModules(root) {
  const deferred = new Set(DEFERRED);
  for (const p of DEFERRED) if (!existsSync(join(root, p))) throw new Error(`Deferred module ${p} does not exist (scripts/deferred-modules.mjs)`);
  const analysed = new Map();
  for (const p of DEFERRED) analysed.set(p, await analyze(root, p));
  const loadSync = join(root, "lib/load-sync.ts");
  return { target, standIns, hostModule, buildModules };

  /** The deferred module `./x.js` imported from `importer` names, as its repository path, or undefined. */
  function target(importer, specifier) {
    const key = resolveSpecifier(root, importer, specifier);
    return key !== undefined && deferred.has(key) ? key : undefined;
  }

  /**
   * What the main build imports in place of a deferred module: one stand-in function per exported
   * function, which loads the module at its first call and calls through, and its literal constants.
   * One module per deferred module, so each stand-in exists once in the bundle under its own name.
   */
  function standIns(key) {
    const name = JSON.stringify(deferredName(key));
    const lines = [`import { requireDeferred } from ${JSON.stringify(loadSync)};`];
    for (const [exported, what] of analysed.get(key).exports) {
      if (what.literal !== undefined) lines.push(`export const ${exported} = ${what.literal};`);
      else lines.push(`export function ${exported}(...args) { return requireDeferred(${name}).${exported}(...args); }`);
    }
    return lines.join("\n");
  }

  function hostModule() {
    const wanted = new Map();
    for (const { imports } of analysed.values()) {
      for (const [key, names] of imports) {
        if (deferred.has(key)) continue;
        const all = wanted.get(key) ?? new Set();
        for (const n of names) all.add(n);
        wanted.set(key, all);
      }
    }
    const lines = [`import { provideDeferredHost } from ${JSON.stringify(loadSync)};`];
    const cases = [];
    [...wanted].forEach(([key, names], i) => {
      const from = key.startsWith("lib/") ? join(root, key) : key;
      lines.push(`import { ${[...names].map((n) => `${n} as h${i}_${n}`).join(", ")} } from ${JSON.stringify(from)};`);
      cases.push(`case ${JSON.stringify(key)}: return { ${[...names].map((n) => `${n}: h${i}_${n}`).join(", ")} };`);
    });
    const lazy = new Set([...analysed.values()].flatMap((a) => [...a.lazy]));
    for (const key of lazy) cases.push(`case ${JSON.stringify(`lazy:${key}`)}: return import(${JSON.stringify(join(root, key))});`);
    lines.push(`provideDeferredHost(function deferredHost(id) {`, `switch (id) {`, ...cases, `}`, `throw new Error("typelm: no module " + id + " for a deferred module");`, `});`);
    return lines.join("\n");
  }

  async function buildModules(outdir, options) {
    const result = await build({
      ...options,
      absWorkingDir: root,
      entryPoints: deferredEntries(),
      outdir,
      bundle: true,
      format: "cjs",
      platform: "node",
      target: "node20",
      write: false,
      plugins: [{
        name: "deferred-imports",
        setup(b) {
          // import("./x.js") → the host's import of x (a lazy chunk of the main build, sharing its eager chunk).
          b.onLoad({ filter: /\.ts$/ }, async (args) => {
            const path = relative(root, args.path);
            const { code } = await toJs(path, readFileSync(args.path, "utf8"));
            const contents = code.replace(LAZY_IMPORT, (_, specifier) => `require(${JSON.stringify(`typelm-host:lazy:${resolveSpecifier(root, args.path, specifier)}`)})`);
            return { contents, loader: "js", resolveDir: dirname(args.path) };
          });
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === "entry-point") return undefined;
            if (args.path.startsWith("typelm-host:")) return { path: args.path, external: true };
            if (args.path.startsWith("node:")) return { path: args.path, external: true };
            const key = args.path.startsWith(".") ? resolveSpecifier(root, args.importer, args.path) : args.path;
            if (key === undefined) return { errors: [{ text: `${relative(root, args.importer)} imports ${args.path}, which is not a library module` }] };
            if (deferred.has(key)) return { path: `typelm-deferred:${deferredName(key)}`, external: true };
            return { path: `typelm-host:${key}`, external: true };
          });
        },
      }],
    });
    for (const file of result.outputFiles) {
      const path = file.path.replace(/\.js$/, ".cjs");
      mkdirSync(dirname(path), { recursive: true });
      // A factory, not a module: requireDeferred (lib/load-sync.ts) calls it with the module record and a
      // require that answers the typelm-host: and typelm-deferred: imports from the eager chunk.
      writeFileSync(path, `"use strict";module.exports=function(module,require){var exports=module.exports;\n${file.text}};\n`);
    }
  }
}
