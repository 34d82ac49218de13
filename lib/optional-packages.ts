/**
 * Optional peer dependencies (see optional.ts): the packages, their version ranges and install lines,
 * the "not installed" ConfigurationError, and the synchronous checks and loads. Functions only, so the
 * bundle loads this module at the first one called (scripts/deferred-modules.mjs); `loadOptional`,
 * which loads with `import()`, is in optional.ts.
 */
import { builtin, libraryFolder, loadOnFirstUse } from "./load-sync.js";
import { ConfigurationError } from "./errors.js";

/**
 * Each optional package with the version range typelm is built and tested against (the version in
 * package.json, as a caret range). test/package/optional-packages.test.ts checks the two agree.
 */
export const OPTIONAL_PACKAGES = {
  openai: "^6.49.0",
  "@anthropic-ai/sdk": "^1.11.0",
  ollama: "^0.6.4",
  "@opentelemetry/sdk-trace-base": "^2.12.1",
  "@opentelemetry/exporter-trace-otlp-http": "^0.223.1",
  "@opentelemetry/resources": "^2.12.1",
  ioredis: "^6.0.0",
  pg: "^8.23.1",
  vega: "^6.4.0",
  "vega-lite": "^6.4.3",
  "@resvg/resvg-js": "^2.6.2",
  tsx: "^4.23.15",
  "@modelcontextprotocol/sdk": "^1.32.2",
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** Packages that only work together: the install line for any of them installs them all. */
const GROUPS: readonly { name: string; packages: readonly OptionalPackage[] }[] = [
  { name: "OpenTelemetry SDK", packages: ["@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources"] },
  { name: "chart renderers", packages: ["vega", "vega-lite", "@resvg/resvg-js"] },
];

/** The chart renderers, loaded by `renderChart` in this order. */
export const CHART_PACKAGES = GROUPS[1]!.packages;

function groupOf(pkg: OptionalPackage): { name: string; packages: readonly OptionalPackage[] } | undefined {
  return GROUPS.find((g) => g.packages.includes(pkg));
}

/** The command that installs `pkg` (with the packages it works with): `npm install openai@^6.49.0`. */
export function installCommand(pkg: OptionalPackage): string {
  const packages = groupOf(pkg)?.packages ?? [pkg];
  return `npm install ${packages.map((p) => `${p}@${OPTIONAL_PACKAGES[p]}`).join(" ")}`;
}

/** What a missing-package error is about, for callers that degrade instead of failing (reports without charts). */
export interface MissingPackage {
  package: OptionalPackage;
  install: string;
}

const missingInfo = new WeakMap<object, MissingPackage>();

/** The missing package `error` reports, when it is one of this module's "not installed" errors. */
export function missingPackageOf(error: unknown): MissingPackage | undefined {
  return typeof error === "object" && error !== null ? missingInfo.get(error) : undefined;
}

/** The ConfigurationError for `pkg` not being installed, `feature` being what needed it ("The openai provider"). */
export function missingPackageError(pkg: OptionalPackage, feature: string, cause?: unknown): ConfigurationError {
  const group = groupOf(pkg);
  const install = installCommand(pkg);
  const how = group === undefined ? "Install it with" : `Install it and the rest of the ${group.name} with`;
  const error = new ConfigurationError(
    `${feature} needs the "${pkg}" package, which is not installed. ${how}: ${install}`,
    cause === undefined ? undefined : { cause },
  );
  missingInfo.set(error, { package: pkg, install });
  return error;
}

/**
 * Whether `pkg` is installed where this library resolves packages from: a `node_modules/<pkg>`
 * folder with a package.json in this folder or any above it (Node's lookup for a bare name).
 */
export function isInstalled(pkg: string): boolean {
  const { dirname, join } = builtin("node:path");
  const { existsSync } = builtin("node:fs");
  for (let dir = libraryFolder(); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules", pkg, "package.json"))) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** True when `error` is a failure to find `pkg` itself (not a file inside it, nor one of its own dependencies). */
export function isPackageMissing(error: unknown, pkg: string): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return !isInstalled(pkg);
}

/** Loads `pkg` with `require()` (for the places that load synchronously); as `loadOptional` otherwise. */
export function requireOptional<T>(pkg: OptionalPackage, feature: string): T {
  try {
    return loadOnFirstUse<T>(pkg)();
  } catch (error) {
    if (isPackageMissing(error, pkg)) throw missingPackageError(pkg, feature, error);
    throw error;
  }
}

/** Throws the ConfigurationError naming `feature` when `pkg` is not installed; loads nothing. */
export function requireInstalled(pkg: OptionalPackage, feature: string): void {
  if (!isInstalled(pkg)) throw missingPackageError(pkg, feature);
}
