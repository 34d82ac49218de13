/**
 * jest's module registry cannot `require()` an ES module, which is how typelm loads @toon-format/toon and
 * temporal-polyfill at first use (Node 20.19 and later can). Before the tests start, this global setup
 * bundles each of them once into a CommonJS file that jest's moduleNameMapper points at, so tests run
 * the same `require` path as a program does.
 */
const { buildSync } = require("esbuild");
const { existsSync, statSync } = require("node:fs");
const { join } = require("node:path");

const OUT = join(__dirname, "../../node_modules/.cache/typelm-jest");

/** Package name → file name; jest.config.cjs maps each package to its file. */
const PACKAGES = { "@toon-format/toon": "toon.cjs", "temporal-polyfill": "temporal-polyfill.cjs" };

function bundleEsmPackages() {
  for (const [pkg, file] of Object.entries(PACKAGES)) {
    const outfile = join(OUT, file);
    // Built once per install: a test that runs jest again in a child (as another user, say) reuses it.
    const manifest = join(__dirname, "../../node_modules", pkg, "package.json");
    if (existsSync(outfile) && existsSync(manifest) && statSync(outfile).mtimeMs >= statSync(manifest).mtimeMs) continue;
    buildSync({
      stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: __dirname, loader: "js" },
      bundle: true, format: "cjs", platform: "node", target: "node20", outfile, logLevel: "warning",
    });
  }
}

module.exports = async () => bundleEsmPackages();
module.exports.OUT = OUT;
module.exports.PACKAGES = PACKAGES;
