/** Native ESM jest with @swc/jest (run with NODE_OPTIONS=--experimental-vm-modules, as `npm test` does). */
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
};
