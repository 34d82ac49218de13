/**
 * The work behind `Module`'s state methods (namedPredictors, dumpState, loadState, clone): what the
 * registry, the optimizers and saved programs use, not a plain call, so the bundle loads it at first
 * use (scripts/deferred-modules.mjs). `Module` keeps one-line methods that call these.
 */
import { ValidationError } from "./errors.js";
import { jsonKeepingMedia } from "./media/refs.js";
import type { Module, ModuleState, PredictorState, Tunable } from "./module.js";
import { isModule } from "./module-brand.js";
import { FewShotExample } from "./prompt/few-shot.js";

// Modules are recognised by their brand (module-brand.ts), so this file does not import module.ts at run time.
function isTunable(value: unknown): value is Tunable & Module {
  return isModule(value) && (value as Partial<Tunable>).isPredictor === true;
}

/** Every predictor inside `root` as `[path, predictor]`, found through its properties. */
export function namedPredictorsOf(root: Module): [string, Tunable & Module][] {
  const found: [string, Tunable & Module][] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, path: string): void => {
    if (value === null || typeof value !== "object" || seen.has(value)) return;
    seen.add(value);
    if (isTunable(value)) {
      found.push([path || "self", value]);
      return;
    }
    if (isModule(value)) {
      for (const [key, child] of Object.entries(value)) {
        if (key !== "config") visit(child, path ? `${path}.${key}` : key);
      }
      return;
    }
    if (Array.isArray(value)) value.forEach((child, i) => visit(child, `${path}[${i}]`));
    else if (value instanceof Map) for (const [k, child] of value) visit(child, `${path}[${String(k)}]`);
  };
  visit(root, "");
  return found;
}

/** The instruction and demos of every predictor in `root`, keyed by path (JSON-ready). */
export function dumpStateOf(root: Module): ModuleState {
  const predictors: Record<string, PredictorState> = {};
  for (const [path, p] of root.namedPredictors()) {
    predictors[path] = {
      instruction: p.instruction,
      // JSON values, except media values, which are kept (their JSON form has no bytes to rebuild them from).
      demos: p.demos.map((d) => jsonKeepingMedia(d.toJSON()) as PredictorState["demos"][number]),
    };
  }
  return { predictors };
}

/** Restores what `dumpStateOf` produced into `root`. Unknown paths are an error: the state belongs to another module. */
export function loadStateInto(
  root: Module,
  state: ModuleState,
  makeExample: (d: PredictorState["demos"][number]) => FewShotExample = (d) => FewShotExample.fromJSON(d),
): void {
  const byPath = new Map(root.namedPredictors());
  for (const [path, s] of Object.entries(state?.predictors ?? {})) {
    const p = byPath.get(path);
    if (p === undefined) {
      throw new ValidationError(
        `State has predictor "${path}" but ${root.constructor.name} has only: ${[...byPath.keys()].join(", ") || "(none)"}`,
        { field: path },
      );
    }
    p.instruction = s.instruction;
    p.demos = s.demos.map(makeExample);
  }
}

/** A deep copy of `root` (see Module.clone). */
export function cloneModule<M extends Module>(root: M): M {
  return cloneValue(root, new Map()) as M;
}

/** Copies modules, arrays, maps and plain objects; `copies` maps each original already copied to its copy. */
function cloneValue(value: unknown, copies: Map<object, unknown>): unknown {
  if (value === null || typeof value !== "object") return value;
  const done = copies.get(value);
  if (done !== undefined) return done;
  if (value instanceof Map) {
    const out = new Map<unknown, unknown>();
    copies.set(value, out);
    for (const [k, v] of value) out.set(k, cloneValue(v, copies));
    return out;
  }
  let out: Record<string, unknown>;
  if (isModule(value)) out = Object.create(Object.getPrototypeOf(value) as object) as Record<string, unknown>;
  else if (Array.isArray(value)) out = new Array(value.length) as unknown as Record<string, unknown>;
  else if (Object.getPrototypeOf(value) === Object.prototype) out = {};
  else return value;
  // Registered before the fields are copied, so a cycle back to `value` finds the copy.
  copies.set(value, out);
  for (const [k, v] of Object.entries(value)) out[k] = cloneValue(v, copies);
  return out;
}
