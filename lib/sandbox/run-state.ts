/** What one `run` of a sandbox is allowed, what stopped it, and the words used to say so. */
import { OutputBuffer } from "./output.js";
import type { ResolvedSandboxOptions } from "./options.js";

/** What must be rebuilt after a run: nothing, the runtime (queued jobs), or the module (memory exhausted). */
export type Reset = "none" | "runtime" | "module";

/** Ends a run early with a guest-facing message; `reset` asks for a fresh guest. */
export class RunStopped extends Error {
  constructor(message: string, readonly reset: Reset = "none") {
    super(message);
  }
}

export const LOST_STATE = "the sandbox was reset and earlier state is lost";

/** The limits of one run and why QuickJS's interrupt handler stopped it, if it did. */
export class RunState {
  readonly output: OutputBuffer;
  /** Epoch ms after which the guest is interrupted. */
  deadline: number;
  /** Set by the interrupt handler: the run hit its time limit, or its tool-call limit. */
  interrupted: "time" | "tools" | null = null;
  toolCalls = 0;

  constructor(readonly options: ResolvedSandboxOptions, deadline = Date.now() + options.timeoutMs) {
    this.output = new OutputBuffer(options.maxOutputChars);
    this.deadline = deadline;
  }

  /**
   * Counts a guest call of a tool. Past the cap it is refused, and the run ends at QuickJS's next
   * interrupt check: the guest may catch the refusal, but it cannot keep looping.
   */
  admitToolCall(): boolean {
    if (this.toolCalls >= this.options.maxToolCalls) {
      this.interrupted ??= "tools";
      return false;
    }
    this.toolCalls += 1;
    return true;
  }

  /** Asked by QuickJS between operations: true stops the guest with an uncatchable "interrupted". */
  shouldInterrupt(): boolean {
    if (this.interrupted !== null) return true;
    if (Date.now() <= this.deadline) return false;
    this.interrupted = "time";
    return true;
  }

  timeLimitMessage(): string {
    return `interrupted: time limit of ${this.options.timeoutMs} ms exceeded`;
  }

  toolLimitMessage(): string {
    return `tool call limit of ${this.options.maxToolCalls} calls per run exceeded (maxToolCalls)`;
  }

  outOfMemoryMessage(): string {
    return `out of memory: memory limit of ${this.options.memoryLimitBytes} bytes exceeded`;
  }

  /** Why the interrupt handler stopped the guest. */
  interruptMessage(): string {
    return this.interrupted === "tools" ? this.toolLimitMessage() : this.timeLimitMessage();
  }
}
