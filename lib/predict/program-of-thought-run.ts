/**
 * ProgramOfThought's loop, loaded at its first call (not at `import "typelm"`): the model writes a
 * program, the sandbox runs it with the task inputs, and the value it hands to `answer(...)` becomes
 * the typed outputs; a program that fails (or hands over a value that does not fit) goes back to the
 * model with its error, up to `maxRepairs` times.
 */
import { convertOutputs } from "../convert/output.js";
import { validateInputs } from "../convert/input.js";
import { MaxIterationsError, OutputError, TypelmError } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import type { CallOptions } from "../module.js";
import { isPlainObject } from "../plain-object.js";
import { Sandbox } from "../sandbox/sandbox.js";
import { compiled, type CompiledSignature } from "../signature/compile.js";
import { emitStep } from "../stream/context.js";
import { defineInputs, stripCodeFence } from "./agent-code.js";
import { renderValue } from "./agent-tools.js";
import { Prediction } from "./prediction.js";
import type { ProgramAttempt, ProgramOfThought, ProgramTrace } from "./program-of-thought.js";

// Installed once per sandbox. `answer` keeps the value in a closure the next run resets, so a
// failed attempt's answer never leaks into the next attempt.
const HARNESS = `(() => {
  let slot; let called = false;
  globalThis.answer = (value) => { slot = value; called = true; return value; };
  globalThis.__typelm_reset = () => { slot = undefined; called = false; };
  globalThis.__typelm_take = (returned) => (called ? { answered: true, value: slot } : { answered: false, value: returned });
})();`;

/**
 * Wraps a program so `return` and `await` work and its declarations do not collide with the last
 * attempt's. The prefix shares the code's first line so error line numbers match the model's code.
 */
function wrap(code: string): string {
  return `__typelm_reset(); __typelm_take(await (async () => { ${code}\n})());`;
}

const TRIES = "programofthought.attempt";

/**
 * Runs the loop for `pot`: resolves with the typed prediction (the final program on it as the
 * non-enumerable `code`, `output`, `attempts`), or throws MaxIterationsError.
 */
export async function runProgramOfThought(pot: ProgramOfThought, inputs: Record<string, unknown>, options: CallOptions): Promise<Prediction> {
  const sig = compiled(pot.signature);
  const values = validateInputs(sig, inputs);
  const callOptions: CallOptions = options.lm === undefined ? {} : { lm: options.lm };
  const agent = `ProgramOfThought(${sig.name})`;
  const attempts: ProgramAttempt[] = [];
  const sandbox = await Sandbox.create(pot.sandboxOptions);
  try {
    for (let attempt = 1; attempt <= pot.maxRepairs + 1; attempt++) {
      const last = attempts[attempts.length - 1];
      const written = last === undefined
        ? await pot.generate.call(values, callOptions)
        : await pot.repair.call({ ...values, previousCode: last.code, error: feedback(last) }, callOptions);
      const code = stripCodeFence(String((written as unknown as { code: string }).code)).trim();
      // Set up before every attempt: after an out-of-memory error the sandbox starts from a fresh guest.
      await defineInputs(sandbox, sig, values);
      const harness = await sandbox.run(HARNESS);
      if (harness.error !== null) throw new TypelmError(`${agent}: sandbox setup failed: ${harness.error}`);
      const ran = await sandbox.run(wrap(code));
      let error = ran.error;
      let outputs: Record<string, unknown> | undefined;
      if (error === null) {
        try {
          outputs = handOver(sig, ran.result);
        } catch (failure) {
          if (!(failure instanceof OutputError)) throw failure;
          error = failure.message;
        }
      }
      attempts.push({ attempt, code, output: ran.output, error });
      emitStep(pot, attempts[attempts.length - 1]);
      Instrumentation.emit(TRIES, { agent, attempt, ok: error === null });
      if (outputs !== undefined) return result(outputs, attempts[attempts.length - 1]!, attempts, Prediction.meta(written));
    }
    const final = attempts[attempts.length - 1]!;
    throw new MaxIterationsError<ProgramAttempt>(
      `${agent}: the program still failed after ${pot.maxRepairs} repair${pot.maxRepairs === 1 ? "" : "s"}: ${final.error}`,
      { history: attempts, maxIterations: pot.maxRepairs + 1 },
    );
  } finally {
    sandbox.dispose();
  }
}

/** The prediction of the outputs, with the final program's trace as non-enumerable properties. */
function result(
  outputs: Record<string, unknown>, final: ProgramAttempt, attempts: ProgramAttempt[], meta: ReturnType<typeof Prediction.meta>,
): Prediction {
  const prediction = new Prediction(outputs, meta);
  const trace: ProgramTrace = { code: final.code, output: final.output, attempts };
  for (const [key, value] of Object.entries(trace)) {
    // A declared output of the same name wins; the trace is still in `attempts` or the history.
    if (!(key in prediction)) Object.defineProperty(prediction, key, { value, enumerable: false });
  }
  return prediction;
}

/** The program's value as typed outputs; throws OutputError (fed back to the model) when it does not fit. */
function handOver(sig: CompiledSignature, result: unknown): Record<string, unknown> {
  const { answered, value } = (result ?? {}) as { answered?: boolean; value?: unknown };
  if (!answered && value === undefined) {
    throw new OutputError("the program neither called answer({ ... }) nor returned a value", {
      raw: "", expected: "a call to answer({ ... }) with the output fields", received: undefined,
    });
  }
  const only = sig.outputs.length === 1 ? sig.outputs[0]!.name : undefined;
  // With one output field, answer(42) means { field: 42 }, unless the object already names the field.
  const outputs = only !== undefined && !(isPlainObject(value) && only in value) ? { [only]: value } : value;
  const raw = renderValue(outputs);
  try {
    return convertOutputs(sig, outputs, raw);
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    throw new OutputError(`the value handed to answer() does not fit the output fields: ${error.message}`, {
      raw, path: error.path, expected: error.expected, received: error.received, cause: error,
    });
  }
}

/** What the repairer reads about a failed attempt. */
function feedback(attempt: ProgramAttempt): string {
  const printed = attempt.output === "" ? "" : `\nIt printed:\n${attempt.output.slice(0, 4000)}`;
  return `${attempt.error ?? "unknown error"}${printed}`;
}
