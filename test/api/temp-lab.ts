// Each test gets its own lab store file in a fresh temporary folder (c.lab = { path }), removed after.
// Imports "typelm" by name like the tests, so it configures the same (dist/) module they use.
import { afterEach, beforeEach } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, resetConfiguration } from "typelm";

export function useTempLab(name: string): { readonly dir: string } {
  const state = { dir: "" };
  beforeEach(() => {
    state.dir = mkdtempSync(join(tmpdir(), `typelm-api-${name}-`));
    configure((c) => { c.lab = { path: join(state.dir, "lab.sqlite") }; });
  });
  afterEach(() => {
    resetConfiguration();
    rmSync(state.dir, { recursive: true, force: true });
  });
  return state;
}
