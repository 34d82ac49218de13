/** Base class of every error typelm raises on purpose. */
export class TypelmError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Invalid input, or an invalid signature, tool or predictor definition. `field` names the culprit. */
export class ValidationError extends TypelmError {
  readonly field: string | undefined;
  constructor(message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, options);
    this.field = options.field;
  }
}

/** No LM, a bad model id, an unknown provider or a missing key. */
export class ConfigurationError extends TypelmError {}

/** A provider call that failed after the retry policy gave up. */
export class LMError extends TypelmError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly provider: string;
  readonly attempts: number;
  constructor(
    message: string,
    options: { status?: number; retryable: boolean; provider: string; attempts?: number; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable;
    this.provider = options.provider;
    this.attempts = options.attempts ?? 1;
  }
}

/** A model reply that could not be parsed or converted to the declared types. */
export class OutputError extends TypelmError {
  /** The model's raw reply text. */
  readonly raw: string;
  /** Where in the output the problem is, e.g. `items[2].price`; "" for the whole reply. */
  readonly path: string;
  readonly expected: string;
  readonly received: unknown;
  constructor(
    message: string,
    options: { raw: string; path?: string; expected: string; received?: unknown; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.raw = options.raw;
    this.path = options.path ?? "";
    this.expected = options.expected;
    this.received = options.received;
  }
}

/** A reply in TOON data format that `@toon-format/toon` could not decode. */
export class ToonDecodeError extends OutputError {
  readonly line: number | undefined;
  constructor(
    message: string,
    options: { raw: string; line?: number; received?: unknown; cause?: unknown },
  ) {
    super(message, { raw: options.raw, expected: "a well-formed TOON document", received: options.received, cause: options.cause });
    this.line = options.line;
  }
}

/** An agent ran out of iterations and could not extract a final answer; `history` holds what it did. */
export class MaxIterationsError<Step = unknown> extends TypelmError {
  readonly history: Step[];
  readonly maxIterations: number;
  constructor(message: string, options: { history: Step[]; maxIterations: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.history = options.history;
    this.maxIterations = options.maxIterations;
  }
}

/** A short, single-line preview of a value for error messages. */
export function preview(value: unknown, max = 120): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (value === undefined) text = "undefined";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
