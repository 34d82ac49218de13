/** Native ESM jest with @swc/jest (run with NODE_OPTIONS=--experimental-vm-modules, as `npm test` does). */
const { availableParallelism } = require("node:os");
const { OUT, PACKAGES } = require("./test/helpers/jest-esm-packages.cjs");

module.exports = {
  testEnvironment: "node",
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: {
    "^(\\.{1,2}/.*)\\.js$": "$1",
    // ES-module-only packages typelm requires at first use, as CommonJS bundles (see the global setup).
    ...Object.fromEntries(Object.entries(PACKAGES).map(([pkg, file]) => [`^${pkg.replace(/[/]/g, "\\/")}$`, `${OUT}/${file}`])),
  },
  globalSetup: "<rootDir>/test/helpers/jest-esm-packages.cjs",
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } }],
  },
  testTimeout: 20000,
  // jest's default is one worker fewer than the cores: on a 2-core machine one, every suite in turn, while
  // many wait on child processes (the built CLI, PostgreSQL, Chromium, npm). Two there: test/evaluate and
  // test/lm took 57 s and 39 s instead of 77 s and 85 s on a busy 2-core machine (load average 6-7).
  maxWorkers: Math.max(2, availableParallelism() - 1),
};
