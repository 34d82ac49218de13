/**
 * ProgramOfThought: the model writes JavaScript that computes the outputs, the sandbox runs it, and
 * the value it hands over is converted like any reply. A runtime error, or a value that does not
 * convert to the declared outputs, is shown to the model for a bounded number of repairs.
 *
 * The program's contract (also in the prompt): the task inputs are the global `inputs`; the code
 * ends by calling `answer({ field: value, ... })` with the output fields, or `return`s that object
 * (the code runs inside an async function, so `return` and `await` both work). With a single output
 * field, `answer(value)` is accepted too.
 *
 * The result is a typed prediction of the signature's outputs. The final program is on it as the
 * non-enumerable properties `code`, `output` (what it printed) and `attempts` (every try), so
 * `toJSON()` and equality checks see only the declared outputs.
 *
 * Model-written code runs only in the QuickJS sandbox (lib/sandbox), never in the host. This module
 * is the class's face: its constructor's body and the demos' conversion load at the first
 * ProgramOfThought built (program-of-thought-setup.ts), its run at the first call
 * (program-of-thought-run.ts).
 */
import type { CallOptions } from "../module.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { AgentSandboxOptions } from "./agent-code.js";
import { PredictorPairAgent } from "./agent-base.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Predict } from "./predict.js";
import { programDemos, programOfThoughtSetup } from "./program-of-thought-setup.js";
import type { Typed } from "./prediction.js";

/** One try at the program: the code, what it printed, and what went wrong (null for the one that worked). */
export interface ProgramAttempt {
  attempt: number;
  code: string;
  output: string;
  error: string | null;
}

/** What a ProgramOfThought result carries besides its outputs (non-enumerable). */
export interface ProgramTrace {
  /** The program that produced the outputs. */
  readonly code: string;
  /** What that program printed. */
  readonly output: string;
  /** Every try, the failed ones first. */
  readonly attempts: ProgramAttempt[];
}

/** Options of `new ProgramOfThought(signature, options)`: how many repairs a failing program gets, and sandbox limits. */
export interface ProgramOfThoughtOptions {
  /** How many times a failing program is sent back to the model with its error. Default 3. */
  maxRepairs?: number;
  /** Limits of the sandbox (time per run, memory, stack, output size). */
  sandbox?: AgentSandboxOptions;
}

/** The typed outputs; `code`, `output` and `attempts` too, where the signature does not declare those names. */
export type ProgramOfThoughtResult<O extends Shape> = Typed<OutputOf<O>> & Omit<ProgramTrace, keyof O>;

/** The model writes a program; the sandbox runs it; its value becomes the typed prediction. */
export class ProgramOfThought<I extends Shape = Shape, O extends Shape = Shape> extends PredictorPairAgent<I, O, ProgramOfThoughtResult<O>> {
  readonly signature: SignatureClass<I, O>;
  /** Writes the first program from the task inputs. */
  generate: Predict;
  /** Writes a corrected program from the task inputs, the failing program and its error. */
  repair: Predict;
  readonly maxRepairs: number;
  readonly sandboxOptions: AgentSandboxOptions;

  constructor(signature: SignatureClass<I, O>, options: ProgramOfThoughtOptions = {}) {
    super();
    this.signature = signature;
    // The options' checks and the predictors are built by program-of-thought-setup.ts, loaded at the first ProgramOfThought.
    const parts = programOfThoughtSetup(signature, options);
    this.maxRepairs = parts.maxRepairs;
    this.sandboxOptions = parts.sandboxOptions;
    this.generate = parts.generate;
    this.repair = parts.repair;
  }

  protected predictorPair(): readonly [Predict, Predict] {
    return [this.generate, this.repair];
  }

  /**
   * The generator's demos. Demos of the task's own outputs are turned into programs that hand those
   * outputs to `answer(...)`, so the model sees the exact form its program must deliver; demos
   * whose output is `{ code }` are used as they are.
   */
  get demos(): FewShotExample[] {
    return this.generate.demos;
  }

  set demos(demos: FewShotExample[]) {
    this.generate.demos = programDemos(this.signature, this.generate, demos);
  }

  protected async run(inputs: InputOf<I>, options: CallOptions): Promise<ProgramOfThoughtResult<O>> {
    // The loop (sandbox runs, repairs, hand-over) loads at the first call: program-of-thought-run.ts.
    const { runProgramOfThought } = await import("./program-of-thought-run.js");
    return (await runProgramOfThought(this, inputs as Record<string, unknown>, options)) as ProgramOfThoughtResult<O>;
  }
}
