/**
 * Optional peer dependencies: the packages only some features need (a provider's SDK, the
 * OpenTelemetry SDK, the chart renderers, ioredis, pg, tsx for TypeScript experiment files, the MCP SDK). Each is loaded when its feature is first used,
 * never at `import "typelm"`. When one is not installed, the feature throws a ConfigurationError
 * that names it and gives the exact `npm install` line; any other failure (a file missing inside an
 * installed package, a dependency of it missing, an error while it runs) propagates unchanged.
 * The packages, messages and synchronous loads are in optional-packages.ts (a deferred module of the
 * bundle); this module adds `loadOptional`, which loads with `import()`.
 */
import { isPackageMissing, missingPackageError, type OptionalPackage } from "./optional-packages.js";

export {
  installCommand, isInstalled, missingPackageError, missingPackageOf, requireInstalled, requireOptional,
  type MissingPackage, type OptionalPackage,
} from "./optional-packages.js";

/**
 * Loads `pkg` (or `specifier`, one of its subpaths such as "tsx/esm/api") with `import()`, or throws the
 * ConfigurationError naming `feature` when the package is not installed.
 */
export async function loadOptional<T>(pkg: OptionalPackage, feature: string, specifier: string = pkg): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    if (isPackageMissing(error, pkg)) throw missingPackageError(pkg, feature, error);
    throw error;
  }
}

