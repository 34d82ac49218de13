// The regression gate's options on the command line (--baseline, --tolerance or --max-drop,
// --allow-underpowered, --junit), checked and turned into GateOptions; and which failures of the gate
// are usage errors (exit 2).
import { ValidationError } from "../../errors.js";
import type { GateOptions } from "../experiment/plan.js";
import { UsageError } from "./usage.js";

/** A wrong gate option or baseline (exit 2): an error of --baseline, --tolerance or --max-drop. */
export function gateUsage(error: unknown): boolean {
  return error instanceof ValidationError && (error.field === "baseline" || error.field === "tolerance" || error.field === "maxDrop");
}

/** `--baseline FILE|RUN [--tolerance T | --max-drop T] [--allow-underpowered] [--junit FILE]`; the others need --baseline. */
export function gateOptions(values: {
  baseline?: string | undefined; "max-drop"?: string | undefined; tolerance?: string | undefined; "allow-underpowered"?: boolean | undefined; junit?: string | undefined;
}): GateOptions | undefined {
  if (values.baseline === undefined) {
    if (values["max-drop"] !== undefined || values.tolerance !== undefined || values["allow-underpowered"] !== undefined || values.junit !== undefined) {
      throw new UsageError("--tolerance (--max-drop), --allow-underpowered and --junit need --baseline <results.json | run id>: the gate compares this run with a baseline", { field: "baseline" });
    }
    return undefined;
  }
  const parse = (name: "tolerance" | "max-drop"): number | undefined => {
    const text = values[name];
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^(0|[1-9]\d*)?(\.\d+)?$/.test(text) || text === "" || text === "." || !(value >= 0 && value < 1)) {
      throw new UsageError(
        `--${name} expects the largest drop to tolerate, a number from 0 up to (not including) 1, e.g. 0.05 for 5 points; received ${JSON.stringify(text)}`,
        { field: "tolerance" },
      );
    }
    return value;
  };
  const tolerance = parse("tolerance"), maxDrop = parse("max-drop");
  if (tolerance !== undefined && maxDrop !== undefined && tolerance !== maxDrop) {
    throw new UsageError(`--tolerance ${tolerance} and --max-drop ${maxDrop} are the same option with two values; give one`, { field: "tolerance" });
  }
  return { baseline: values.baseline, tolerance: tolerance ?? maxDrop, allowUnderpowered: values["allow-underpowered"] === true, junit: values.junit };
}
