// The registry of tuned modules' versions: the `Registry` class, which keeps its fields and one-line
// methods (where a registry is, and `register`'s check, are in registry-impl.ts, which the bundle loads at
// the first `new Registry`; the reads and writes are in engine.ts, loaded at the first of them).
import type { Module } from "../../module.js";
import { registerModuleClass, registryLocation } from "./registry-impl.js";
import type { RegistryVersion } from "../records.js";
import type { RegistryEngine } from "./engine.js";

/** Options of `new Registry(options)`: which SQLite file holds the versions. */
export interface RegistryOptions {
  /** The SQLite file or a `postgres://` URL; default `c.lab.url` or `TYPELM_LAB_URL`, else `c.lab.path`, else `.typelm/lab.sqlite`. */
  path?: string;
}

/** What `registry.store` takes: the module, the name to store it under, and metadata kept with the version. */
export interface StoreOptions {
  moduleInstance: Module;
  name: string;
  /** JSON-ready notes kept with the version; a numeric `score` here beats the module's last score. */
  metadata?: Record<string, unknown>;
}

/** Options of `registry.load`: which version, and an existing module to load it into. */
export interface LoadOptions<M extends Module> {
  /** Which version; the latest by default. */
  version?: number;
  /** Load into this module (its predictors get the stored instructions and demos) instead of a new one. */
  into?: M;
}

/** What `registry.store` resolves with: the name, the new version number and when it was stored (ISO 8601). */
export interface StoredVersion {
  name: string;
  version: number;
  createdAt: string;
}

/** A class `load` may construct with no arguments. */
export type ModuleClass = new () => Module;

/** Classes `load` may construct, by class name: registered by hand or by `store` in this process. */
export const classes = new Map<string, ModuleClass>();

/**
 * Stored versions of tuned modules, in the lab's SQLite file. Each version keeps every predictor's
 * instruction, demos (with ids) and signature fingerprint; `load` rebuilds a module whose prompts are
 * the stored one's.
 */
export class Registry {
  /** The file, or a team's PostgreSQL database shown without its credentials. */
  readonly path: string;
  readonly #location: string;
  #engine: Promise<RegistryEngine> | undefined;

  constructor(options: RegistryOptions = {}) {
    const { location, path } = registryLocation(options);
    this.#location = location;
    this.path = path;
  }

  /** Lets `load` build `ModuleClass` (constructible with no arguments) by its class name, in any process. */
  static register(ModuleClass: new () => Module): void {
    registerModuleClass(ModuleClass);
  }

  #run(): Promise<RegistryEngine> {
    return (this.#engine ??= import("./engine.js").then(({ RegistryEngine }) => new RegistryEngine(this.#location)));
  }

  /** Stores a new version of `name` (1, 2, 3 ... per name) and returns it. */
  async store(options: StoreOptions): Promise<StoredVersion> {
    return (await this.#run()).store(options);
  }

  /** Rebuilds the stored module (the latest version unless `version` is given). */
  async load<M extends Module = Module>(name: string, options: LoadOptions<M> = {}): Promise<M> {
    return (await this.#run()).load(name, options);
  }

  /** Every stored version of `name`, oldest first ([] when none). */
  async versions(name: string): Promise<RegistryVersion[]> {
    return (await this.#run()).versions(name);
  }
}
