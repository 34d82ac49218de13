// The synchronous work behind `Registry` (lib/store/registry/registry.ts): where a registry is, from its
// options or the configuration, and the check of `Registry.register`. The bundle loads this module at the
// first `new Registry` or `Registry.register` (scripts/deferred-modules.mjs).
import { builtin } from "../../load-sync.js";
import { configuredLabUrl, configuredStorePath } from "../../config.js";
import { shownUrl } from "../../instrument/redact.js";
import { storeKind } from "../store-kind.js";
import { ValidationError } from "../../errors.js";
import type { Module } from "../../module.js";
import { isModuleSubclass } from "../../module-brand.js";
import { classes, type RegistryOptions } from "./registry.js";

/**
 * Where `new Registry(options)` keeps its versions: `location` (an absolute file path, ":memory:", or a
 * PostgreSQL URL) and `path`, the same as messages show it (a URL without its credentials).
 */
export function registryLocation(options: RegistryOptions): { location: string; path: string } {
  // A team's lab on PostgreSQL (c.lab = { url } or TYPELM_LAB_URL) holds its registry too.
  const path = options.path ?? configuredLabUrl() ?? configuredStorePath();
  // Another scheme or a keyword string is refused without being shown (it may carry a password).
  const team = path !== ":memory:" && storeKind(path, "Registry") === "postgresql";
  const location = path === ":memory:" || team ? path : builtin("node:path").resolve(path);
  return { location, path: team ? shownUrl(path) : location };
}

/** `Registry.register(ModuleClass)`: checks it is a `Module` subclass and lets `load` build it by its class name. */
export function registerModuleClass(ModuleClass: new () => Module): void {
  if (!isModuleSubclass(ModuleClass)) {
    throw new ValidationError("Registry.register expects a Module subclass (class MyModule extends Module { ... })", { field: "ModuleClass" });
  }
  classes.set(ModuleClass.name, ModuleClass);
}
