import { afterEach, jest } from "@jest/globals";
import { resetConfiguration } from "../../lib/config.js";
import { Instrumentation } from "../../lib/instrument/bus.js";
import type { ScriptedLM } from "../../lib/testing/index.js";

/** The user message of the `i`-th request a scripted LM received. */
export const userText = (lm: ScriptedLM, i: number): string => lm.requests[i]!.messages.find((m) => m.role === "user")!.content;

/** The system message of the `i`-th request a scripted LM received. */
export const systemText = (lm: ScriptedLM, i: number): string => lm.requests[i]!.messages.find((m) => m.role === "system")!.content;

/** After each test of the file: global configuration, event subscribers and mocks back to their defaults. */
export function resetAfterEach(): void {
  afterEach(() => {
    resetConfiguration();
    Instrumentation.reset();
    jest.restoreAllMocks();
  });
}
