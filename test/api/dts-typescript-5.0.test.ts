/**
 * API.md: public `.d.ts` stay valid for TypeScript 5.0, which tslab uses to compile notebook cells.
 * A consumer (fixtures/consumer.ts.txt: every public name, typed results checked with
 * `@ts-expect-error`) is type-checked by tslab's own TypeScript 5.0 with tslab's compiler options
 * (module esnext, moduleResolution node10, skipLibCheck), importing "typelm", "typelm/testing" and
 * "typelm/notebook" through node_modules/typelm → the repository, as notebooks do. Needs `npm run build`.
 */
import { expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const tsc = join(root, "node_modules/@tslab/typescript-for-tslab/lib/tsc.js");

function check(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "typelm-ts50-"));
  try {
    // node_modules holds zod, @types/node and the typelm link the notebook set-up makes (node_modules/typelm → ..).
    const modules = join(dir, "node_modules");
    symlinkSync(join(root, "node_modules"), modules, "dir");
    copyFileSync(join(import.meta.dirname, "fixtures/consumer.ts.txt"), join(dir, "consumer.ts"));
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
      compilerOptions: {
        module: "esnext", moduleResolution: "node10", esModuleInterop: true, target: "es2020", lib: ["es2022"],
        declaration: true, skipLibCheck: true, noEmit: true, experimentalDecorators: true, resolveJsonModule: true,
        types: ["node"], ...extra,
      },
      files: ["consumer.ts"],
    }));
    const out = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
    return `${out.stdout}${out.stderr}`.trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the TypeScript of tslab is 5.0", async () => {
  const { createRequire } = await import("node:module");
  const pkg = createRequire(import.meta.url)(join(root, "node_modules/@tslab/typescript-for-tslab/package.json")) as { version: string };
  expect(pkg.version).toMatch(/^5\.0\./);
});

test("a consumer of all three entry points type-checks under TypeScript 5.0 with tslab's options", () => {
  // Requires node_modules/typelm (scripts/setup-notebooks.sh makes it); make it when missing.
  const link = join(root, "node_modules/typelm");
  try { symlinkSync("..", link, "dir"); } catch { /* already there */ }
  expect(check({})).toBe("");
}, 60_000);
