/**
 * The shipped build: esbuild bundles the four entry points (typelm, typelm/testing, typelm/notebook and
 * the `typelm` command) into dist/pkg/, with shared chunks so every entry point sees the same classes,
 * configuration and event bus. Packages stay external (the user's zod is typelm's zod); what a program
 * may never use is loaded at first use by the code itself. tsc still writes dist/lib/ (the modules
 * bench/ and scripts/ import); its .d.ts files are copied to dist/types/, which the package ships.
 *
 * Why a bundle: on Node 20 the ESM loader spends about half a millisecond per module resolving, reading
 * and linking; one file per entry point instead of ~150 modules is most of the cold-start gain (the
 * numbers are in bench/README.md). No source maps: they were most of the package (823 kB for the main
 * chunk of a 1.4 MB tarball), and the bundle is not minified, so a stack trace's file and line point
 * at readable code that is the source with its types removed.
 */
import { build } from "esbuild";
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { deferredModules } from "./deferred-modules.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist/pkg");
const libraryIndex = join(root, "lib/index.ts");
const otherEntries = ["lib/testing/index.ts", "lib/notebook/index.ts", "lib/lab/cli/bin.ts"].map((f) => join(root, f));

/**
 * One chunk for what `import "typelm"` loads. esbuild gives each set of entry points (the four above
 * and every `import()` target) that reach a module its own chunk; the modules the library index loads
 * are reached by different subsets of the lazily loaded parts, so they were split over some 35 chunks,
 * and on Node 20 each module loaded costs start-up time of its own. Making every other entry point
 * import the library index first (it is loaded before any of them runs anyway) gives all of those
 * modules the same set, so they share one chunk. Evaluation order is unchanged: the index is either
 * already loaded or loads first, as it would through the entry's own imports.
 */
const lazyEntries = new Set(otherEntries);
for (const file of readdirSync(join(root, "lib"), { recursive: true })) {
  if (!String(file).endsWith(".ts")) continue;
  const path = join(root, "lib", String(file));
  for (const m of readFileSync(path, "utf8").matchAll(/import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)) {
    lazyEntries.add(join(dirname(path), m[1]).replace(/\.js$/, ".ts"));
  }
}
const deferred = await deferredModules(root);
const oneEagerChunk = {
  name: "one-eager-chunk",
  setup(b) {
    // The host of the deferred modules (scripts/deferred-modules.mjs), imported last by the library index.
    b.onResolve({ filter: /^typelm:deferred-host$/ }, () => ({ path: "deferred-host", namespace: "typelm" }));
    b.onLoad({ filter: /.*/, namespace: "typelm" }, () => ({ contents: deferred.hostModule(), loader: "js", resolveDir: root }));
    // A deferred module is read as its stand-ins: functions that load it at their first call.
    b.onResolve({ filter: /^\./ }, (args) => {
      if (args.namespace !== "file") return undefined;
      const key = deferred.target(args.importer, args.path);
      return key === undefined ? undefined : { path: key, namespace: "deferred" };
    });
    b.onLoad({ filter: /.*/, namespace: "deferred" }, (args) => ({ contents: deferred.standIns(args.path), loader: "js", resolveDir: root }));
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      let source = readFileSync(args.path, "utf8");
      if (args.path === libraryIndex) source += `\nimport "typelm:deferred-host";\n`;
      if (!lazyEntries.has(args.path)) return { contents: source, loader: "ts" };
      const hashbang = source.startsWith("#!") ? source.slice(0, source.indexOf("\n") + 1) : "";
      return { contents: `${hashbang}import ${JSON.stringify(libraryIndex)};\n${source.slice(hashbang.length)}`, loader: "ts" };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
const main = await build({
  absWorkingDir: root,
  entryPoints: {
    index: "lib/index.ts",
    testing: "lib/testing/index.ts",
    notebook: "lib/notebook/index.ts",
    bin: "lib/lab/cli/bin.ts",
  },
  outdir,
  bundle: true,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: false,
  // Whitespace and comments removed, lines kept short: comments and indentation were a quarter of the
  // eager chunk's bytes, and every byte `import "typelm"` loads is read, decoded and scanned at start-up
  // (with the doc comments' typography the chunk was not even ASCII, which Node decodes more slowly). The
  // whitespace-minified bundle without a line limit was one line of tens of KB, and Node prints the
  // source line of the frame that threw before an uncaught error; `lineLimit` breaks lines after about
  // 100 characters, so that line stays readable. Identifiers are kept (stack traces name our functions).
  // Syntax minification stays off: it joins statements into comma expressions of up to 1,400 characters.
  minifyWhitespace: true,
  lineLimit: 100,
  minifySyntax: false,
  charset: "ascii",
  // The inputs of every output file, read by scripts/eager-chunk.ts (which modules `import "typelm"` loads).
  metafile: true,
  // No keepNames: it adds a __name() call for every function and class (about 8% of the import time).
  // Names stay as written anyway, since identifiers are not minified; the classes esbuild renames
  // are put back below.
  keepNames: false,
  plugins: [oneEagerChunk],
  logLevel: "warning",
});
writeFileSync(join(root, "dist/bundle-meta.json"), JSON.stringify(main.metafile));

// The deferred modules, each built alone as CommonJS (scripts/deferred-modules.mjs), in the same format.
await deferred.buildModules(outdir, { minifyWhitespace: true, lineLimit: 100, charset: "ascii", logLevel: "warning" });

// A class whose body refers to itself comes out as `var X = class _X { ... _X ... }`, so X.name would
// be "_X" (error names, module names in saved state and messages use class names). Inside its own
// body a class expression's name is bound to the class, so `var X = class X { ... X ... }` is the
// same program with the right name; nothing else can refer to the inner `_X`.
for (const file of readdirSync(outdir, { recursive: true })) {
  if (!String(file).endsWith(".js")) continue;
  const path = join(outdir, String(file));
  let code = readFileSync(path, "utf8");
  const renamed = [...code.matchAll(/\b([A-Za-z$][\w$]*) ?= ?class _\1\b/g)].map((m) => m[1]);
  for (const name of new Set(renamed)) code = code.replace(new RegExp(`(?<![\\w$.])_${name.replace(/\$/g, "\\$")}(?![\\w$])`, "g"), name);
  if (renamed.length > 0) writeFileSync(path, code);
}

// The run viewer's interval and query workers (lib/view/intervals.ts, query-thread.ts start them from these files beside the bundle):
// a file of its own, bundled with what it uses, which nothing imports, so `import "typelm"` never loads it.
await build({
  absWorkingDir: root,
  entryPoints: { "view-interval-worker": "lib/view/interval-worker.ts", "view-query-worker": "lib/view/query-worker.ts" },
  outdir,
  bundle: true, format: "esm", platform: "node", target: "node20", packages: "external", sourcemap: false, logLevel: "warning",
});

// temporal-polyfill and @toon-format/toon as CommonJS, for a require() that refuses ES modules (jest's
// module registry): lib/load-sync.ts loads the package itself wherever it can, and these only then.
for (const [pkg, file] of [["temporal-polyfill", "temporal-polyfill.cjs"], ["@toon-format/toon", "toon.cjs"]]) {
  await build({
    absWorkingDir: root,
    stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: root, loader: "js" },
    bundle: true, format: "cjs", platform: "node", target: "node20", outfile: join(outdir, "vendor", file), logLevel: "warning",
  });
}

// The type declarations the package ships (package.json "types" and "exports"), without tsc's JavaScript.
const types = join(root, "dist/types");
rmSync(types, { recursive: true, force: true });
cpSync(join(root, "dist/lib"), types, { recursive: true, filter: (path) => !/\.(js|js\.map)$/.test(path) });

// The bundled experiments compiled to JavaScript, so `typelm reproduce` runs them without tsx (an
// optional peer dependency, needed only to run TypeScript experiment files of one's own).
const experiments = join(root, "dist/experiments");
rmSync(experiments, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: readdirSync(join(root, "experiments")).filter((f) => f.endsWith(".ts")).map((f) => `experiments/${f}`),
  outdir: experiments,
  format: "esm",
  platform: "node",
  target: "node20",
  logLevel: "warning",
});
