// Stored versions of tuned modules in the lab's SQLite file: what `Registry` (registry.ts) does, loaded
// at its first operation so `import "typelm"` does not compile it.
import { nodeCrypto } from "../../load-sync.js";
import { ConfigurationError, ValidationError } from "../../errors.js";
import { canonicalJson } from "../../canonical-json.js";
import type { Module, Tunable } from "../../module.js";
import { isModule } from "../../module-brand.js";
import { isPlainObject } from "../../plain-object.js";
import { FewShotExample } from "../../prompt/few-shot.js";
import type { MediaValue } from "../../media/media.js";
import { mediaFromRefs, mediaToRefs } from "../../media/refs.js";
import { keepRegistryMedia, readRegistryMedia } from "./media.js";
import type { CompiledSignature } from "../../signature/compile.js";
import { openStoreSync, storeError } from "../db.js";
import { shownUrl } from "../../instrument/redact.js";
import { isPostgresUrl, postgresError, postgresPool } from "../pg.js";
import type { Database } from "../db.js";
import { lastScore } from "../module-score.js";
import type { RegistryVersion } from "../records.js";
import { classes, type LoadOptions, type ModuleClass, type StoredVersion, type StoreOptions } from "./registry.js";

/** What a version holds for each predictor: enough to rebuild its prompt, and to check it fits. */
interface StoredPredictor {
  instruction: string;
  demos: { input: Record<string, unknown>; output: Record<string, unknown>; id?: string }[];
  /** sha256 of the canonical JSON of the signature's field names and compiled JSON schemas. */
  signature: string;
  signatureName: string;
}

interface StoredState {
  predictors: Record<string, StoredPredictor>;
}

/** Copies of the modules stored by this process (a bare `Predict` cannot be rebuilt from a class name). */
const templates = new Map<string, Module>();

interface VersionRaw {
  name: string; version: number; created_at: string; score: number | null; metadata_json: string; state_json: string;
  module_class: string;
}

/** The registry behind `Registry` (registry.ts), loaded at its first operation; `path` is already resolved. */
export class RegistryEngine {
  /** Only for ":memory:", which is a new database on every open. */
  #memory: Database | undefined;
  /** The file, or a team's PostgreSQL database URL (with its credentials; `path` shows it without). */
  readonly #location: string;
  /** Where the versions are, as messages show it. */
  readonly path: string;

  constructor(location: string) {
    this.#location = location;
    this.path = isPostgresUrl(location) ? shownUrl(location) : location;
  }

  /** Stores a new version of `name` (1, 2, 3 ... per name) and returns it. */
  async store({ moduleInstance, name, metadata = {} }: StoreOptions): Promise<StoredVersion> {
    if (!isModule(moduleInstance)) {
      throw new ValidationError("registry.store expects { moduleInstance } to be a Module (Predict, ChainOfThought or your own)", { field: "moduleInstance" });
    }
    checkName(name);
    const metadataJson = metadataText(metadata);
    const media = new Map<string, MediaValue>();
    const state = stateOf(moduleInstance, media);
    keepRegistryMedia(this.#location, media, this.path);
    const score = typeof metadata.score === "number" && Number.isFinite(metadata.score) ? metadata.score : lastScore(moduleInstance) ?? null;
    const createdAt = new Date().toISOString();
    const params = {
      name, created_at: createdAt, score, metadata_json: metadataJson, state_json: JSON.stringify(state),
      module_class: moduleInstance.constructor.name,
    };
    const version = isPostgresUrl(this.#location) ? await this.#storePostgres(params) : this.#use("store a module version in", (db) => db.prepare<unknown[], { version: number }>(
      // One statement, so two processes storing the same name at once still get distinct versions.
      `INSERT INTO registry_versions (name, version, created_at, score, metadata_json, state_json, module_class)
       SELECT @name, COALESCE(MAX(version), 0) + 1, @created_at, @score, @metadata_json, @state_json, @module_class
       FROM registry_versions WHERE name = @name RETURNING version`,
    ).get(params))!.version;
    templates.set(templateKey(this.path, name, version), moduleInstance.clone());
    classes.set(moduleInstance.constructor.name, moduleInstance.constructor as ModuleClass);
    return { name, version, createdAt };
  }

  /** Rebuilds the stored module (the latest version unless `version` is given). */
  async load<M extends Module = Module>(name: string, options: LoadOptions<M> = {}): Promise<M> {
    checkName(name);
    const raw = await this.#find(name, options.version);
    const state = storedState(raw, this.path);
    const target = options.into ?? (this.#rebuild(raw) as M);
    if (!isModule(target)) {
      throw new ValidationError("registry.load expects { into } to be a Module instance", { field: "into" });
    }
    applyState(target, state, `"${name}" v${raw.version}`, this.path, (sha) => readRegistryMedia(this.#location, sha));
    return target;
  }

  /** Every stored version of `name`, oldest first ([] when none). */
  async versions(name: string): Promise<RegistryVersion[]> {
    checkName(name);
    return (await this.#all(name)).map((r) => ({
      name: r.name, version: r.version, createdAt: r.created_at, score: r.score, metadata: storedMetadata(r, this.path),
    }));
  }

  /** Every version of `name`, oldest first. */
  async #all(name: string): Promise<VersionRaw[]> {
    if (isPostgresUrl(this.#location)) return this.#queryPostgres<VersionRaw>("SELECT * FROM registry_versions WHERE name = $1 ORDER BY version", [name]);
    return this.#use("read", (db) => db.prepare<[string], VersionRaw>(
      "SELECT * FROM registry_versions WHERE name = ? ORDER BY version",
    ).all(name));
  }

  async #find(name: string, version: number | undefined): Promise<VersionRaw> {
    const raw = isPostgresUrl(this.#location)
      ? (await this.#queryPostgres<VersionRaw>(
        version === undefined
          ? "SELECT * FROM registry_versions WHERE name = $1 ORDER BY version DESC LIMIT 1"
          : "SELECT * FROM registry_versions WHERE name = $1 AND version = $2",
        version === undefined ? [name] : [name, version],
      ))[0]
      : this.#use("read", (db) => version === undefined
        ? db.prepare<[string], VersionRaw>("SELECT * FROM registry_versions WHERE name = ? ORDER BY version DESC LIMIT 1").get(name)
        : db.prepare<[string, number], VersionRaw>("SELECT * FROM registry_versions WHERE name = ? AND version = ?").get(name, version));
    if (raw !== undefined) return raw;
    const known = (await this.#all(name)).map((r) => r.version);
    throw new ValidationError(
      `The registry at ${this.path} has no ${version === undefined ? "version" : `version ${version}`} of "${name}"` +
        (known.length > 0 ? `; stored versions: ${known.join(", ")}` : "; store one first with registry.store({ moduleInstance, name })"),
      { field: version === undefined ? "name" : "version" },
    );
  }

  #rebuild(raw: VersionRaw): Module {
    const template = templates.get(templateKey(this.path, raw.name, raw.version));
    if (template !== undefined) return template.clone();
    const ModuleClass = classes.get(raw.module_class);
    const how = `call Registry.register(${raw.module_class}) before loading (a class constructible with no arguments), ` +
      `or pass the module to fill: registry.load(${JSON.stringify(raw.name)}, { into: new ${raw.module_class}(...) })`;
    if (ModuleClass === undefined) {
      throw new ConfigurationError(`Cannot rebuild "${raw.name}" v${raw.version}: its class ${raw.module_class} is not known in this process; ${how}`);
    }
    try {
      return new ModuleClass();
    } catch (error) {
      throw new ConfigurationError(
        `Cannot rebuild "${raw.name}" v${raw.version}: new ${raw.module_class}() failed (${error instanceof Error ? error.message : String(error)}); ` +
          `pass the module to fill instead: registry.load(${JSON.stringify(raw.name)}, { into: new ${raw.module_class}(...) })`,
        { cause: error },
      );
    }
  }

  /**
   * A new version on PostgreSQL: the next number is taken under a per-name transaction lock, so
   * processes on several machines storing the same name at once get distinct, gapless versions.
   */
  async #storePostgres(p: Record<string, unknown>): Promise<number> {
    const { pool, ready } = postgresPool(this.#location);
    await ready;
    const client = await pool.connect().catch((error: unknown) => { throw postgresError(this.#location, "open", error); });
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtext('typelm.registry'), hashtext($1))", [p.name]);
      const { rows } = await client.query<{ version: number }>(
        `INSERT INTO registry_versions (name, version, created_at, score, metadata_json, state_json, module_class)
         SELECT $1::text, COALESCE(MAX(version), 0) + 1, $2, $3, $4, $5, $6 FROM registry_versions WHERE name = $1 RETURNING version`,
        [p.name, p.created_at, p.score, p.metadata_json, p.state_json, p.module_class],
      );
      await client.query("COMMIT");
      return rows[0]!.version;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw postgresError(this.#location, "store a module version in", error);
    } finally {
      client.release();
    }
  }

  async #queryPostgres<T>(sql: string, params: unknown[]): Promise<T[]> {
    const { pool, ready } = postgresPool(this.#location);
    await ready;
    try {
      return (await pool.query(sql, params)).rows as T[];
    } catch (error) {
      throw postgresError(this.#location, "read", error);
    }
  }

  #use<T>(action: string, fn: (db: Database) => T): T {
    const db = this.#location === ":memory:" ? (this.#memory ??= openStoreSync(this.#location)) : openStoreSync(this.#location);
    try {
      return fn(db);
    } catch (error) {
      throw storeError(this.path, action, error);
    }
  }
}

/** The state to store; each media value in a demo becomes a reference, and its value is put in `media` by sha256. */
function stateOf(module: Module, media: Map<string, MediaValue>): StoredState {
  const predictors: Record<string, StoredPredictor> = {};
  for (const [path, p] of module.namedPredictors()) {
    const sig = signatureOf(p);
    predictors[path] = {
      instruction: p.instruction,
      demos: p.demos.map((d) => mediaToRefs(d.toJSON(), media) as StoredPredictor["demos"][number]),
      signature: fingerprint(sig),
      signatureName: sig?.name ?? "(none)",
    };
  }
  return { predictors };
}

/**
 * The stored state of a version, checked before anything uses it: a row damaged in the file (edited
 * by hand, written by a broken tool) is a ConfigurationError naming the version, not a TypeError.
 */
function storedState(raw: VersionRaw, path: string): StoredState {
  let state: unknown;
  try {
    state = JSON.parse(raw.state_json);
  } catch (error) {
    throw damaged(raw, path, `it is not valid JSON (${error instanceof Error ? error.message : String(error)})`, error);
  }
  if (!isPlainObject(state) || !isPlainObject(state.predictors)) {
    throw damaged(raw, path, `expected { predictors: { <path>: { instruction, demos, signature, signatureName } } }; received ${preview(state)}`);
  }
  for (const [predictor, p] of Object.entries(state.predictors)) {
    if (!isPlainObject(p)) throw damaged(raw, path, `predictor "${predictor}" is ${preview(p)}, not an object`);
    for (const field of ["instruction", "signature", "signatureName"] as const) {
      if (typeof p[field] !== "string") throw damaged(raw, path, `predictor "${predictor}": ${field} must be a string; received ${preview(p[field])}`);
    }
    if (!Array.isArray(p.demos)) throw damaged(raw, path, `predictor "${predictor}": demos must be a list; received ${preview(p.demos)}`);
  }
  return state as unknown as StoredState;
}

function storedMetadata(raw: VersionRaw, path: string): Record<string, unknown> {
  let metadata: unknown;
  try {
    metadata = JSON.parse(raw.metadata_json);
  } catch (error) {
    throw damaged(raw, path, `its metadata is not valid JSON (${error instanceof Error ? error.message : String(error)})`, error, "metadata");
  }
  if (!isPlainObject(metadata)) throw damaged(raw, path, `its metadata must be an object; received ${preview(metadata)}`, undefined, "metadata");
  return metadata;
}

function damaged(raw: VersionRaw, path: string, detail: string, cause?: unknown, part = "state"): ConfigurationError {
  return new ConfigurationError(
    `The stored ${part} of "${raw.name}" v${raw.version} in the registry at ${path} is damaged: ${detail}; ` +
      "store the module again with registry.store, or load another version",
    cause === undefined ? undefined : { cause },
  );
}

/** A short description of a value found in a damaged row. */
function preview(value: unknown): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Puts the stored instructions and demos into `target`. Everything is checked and every demo rebuilt
 * first, so a mismatch or a bad demo leaves the target as it was; a predictor that refuses the values
 * while they are applied has the earlier ones put back.
 */
function applyState(target: Module, state: StoredState, what: string, registryPath: string, media: (sha256: string) => Uint8Array | undefined): void {
  const present = new Map(target.namedPredictors());
  const stored = Object.keys(state.predictors);
  for (const path of present.keys()) {
    if (!(path in state.predictors)) {
      throw new ConfigurationError(
        `Cannot load ${what} into ${target.constructor.name}: its predictor "${path}" is not in the stored version, which has ${stored.join(", ") || "(none)"}; load into a module of the stored shape`,
      );
    }
  }
  const updates: { predictor: Tunable & Module; instruction: string; demos: FewShotExample[] }[] = [];
  for (const [path, s] of Object.entries(state.predictors)) {
    const p = present.get(path);
    if (p === undefined) {
      throw new ConfigurationError(
        `Cannot load ${what} into ${target.constructor.name}: the stored predictor "${path}" has no counterpart (the module has ${[...present.keys()].join(", ") || "(none)"})`,
      );
    }
    const sig = signatureOf(p);
    if (fingerprint(sig) !== s.signature) {
      throw new ConfigurationError(
        `Cannot load ${what} into ${target.constructor.name}: predictor "${path}" has signature ${sig?.name ?? "(none)"} whose fields or types differ ` +
          `from the stored ${s.signatureName}; load into a module built with the signature it was stored with`,
      );
    }
    const demos = s.demos.map((d, i) => {
      try {
        return FewShotExample.fromJSON(mediaFromRefs(d, media, `predictor "${path}" demo ${i + 1}`));
      } catch (error) {
        throw new ConfigurationError(
          `The stored state of ${what} in the registry at ${registryPath} is damaged: predictor "${path}" demo ${i + 1} cannot be rebuilt ` +
            `(${error instanceof Error ? error.message : String(error)}); store the module again with registry.store, or load another version`,
          { cause: error },
        );
      }
    });
    updates.push({ predictor: p, instruction: s.instruction, demos });
  }
  const before = updates.map(({ predictor }) => ({ predictor, instruction: predictor.instruction, demos: predictor.demos }));
  try {
    for (const u of updates) {
      u.predictor.instruction = u.instruction;
      u.predictor.demos = u.demos;
    }
  } catch (error) {
    for (const b of before) {
      b.predictor.instruction = b.instruction;
      b.predictor.demos = b.demos;
    }
    throw error;
  }
}

function signatureOf(p: Tunable & Module): CompiledSignature | undefined {
  return (p as { compiledSignature?: CompiledSignature }).compiledSignature;
}

/** The metadata as stored, or a `ValidationError` before anything is written. */
function metadataText(metadata: unknown): string {
  if (!isPlainObject(metadata)) {
    throw new ValidationError(
      `registry.store: metadata must be an object such as { note: "..." }; received ${Array.isArray(metadata) ? "an array" : metadata === null ? "null" : typeof metadata}`,
      { field: "metadata" },
    );
  }
  try {
    return JSON.stringify(metadata);
  } catch (error) {
    throw new ValidationError(
      `registry.store: metadata cannot be stored as JSON (${error instanceof Error ? error.message : String(error)}); give plain values: strings, numbers, booleans, arrays, objects`,
      { field: "metadata" },
    );
  }
}

function fingerprint(sig: CompiledSignature | undefined): string {
  const text = sig === undefined ? "none" : canonicalJson({
    inputs: sig.inputs.map((f) => f.name), outputs: sig.outputs.map((f) => f.name),
    inputSchema: sig.inputJsonSchema, outputSchema: sig.outputJsonSchema,
  });
  return nodeCrypto().createHash("sha256").update(text).digest("hex");
}

function checkName(name: string): void {
  if (typeof name !== "string" || name.trim() === "") {
    throw new ValidationError(`A registry name must be a non-empty string; received ${JSON.stringify(name)}`, { field: "name" });
  }
}

function templateKey(path: string, name: string, version: number): string {
  return `${path}\u0000${name}\u0000${version}`;
}
