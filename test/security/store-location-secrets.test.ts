// A lab store location that carries a password, in every form a user may type it wrongly or rightly
// (a password not percent-encoded, `#` or `?` in it, a misspelt or foreign scheme, a libpq keyword
// string): no command that takes a store prints the password, and an address that is neither a file
// nor a PostgreSQL URL is a ConfigurationError. Nothing here needs a database server: the PostgreSQL
// URLs point at a loopback port where nothing listens.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../lib/lab/cli/index.js";
import { chooseStore } from "../../lib/lab/runs/team-store.js";
import { copyLab } from "../../lib/store/copy/lab-copy.js";
import { ConfigurationError } from "../../lib/errors.js";
import { maskUrlCredentials, shownStore, shownUrl } from "../../lib/instrument/redact.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import { Registry } from "../../lib/store/registry/registry.js";
import { LM } from "../../lib/lm/lm.js";
import { configure, resetConfiguration } from "../../lib/config.js";
import { freePort } from "../helpers/redis.js";
import { offline, runBuiltCli } from "../helpers/cli.js";
import { shoutProject } from "../helpers/shout-project.js";
import { startFakeProvider } from "../../lib/testing/index.js";

// Short on purpose (under 8 characters, so never a registered secret): only the way a location is
// shown keeps these out. Each is a piece of the password that no message has any other reason to hold.
const SECRET = "Zq7wX";
const dir = mkdtempSync(join(tmpdir(), "typelm-store-secrets-"));
let port = 0;
/** The forms, each with the piece of it that must never be printed. */
let forms: { name: string; location: string; postgres: boolean }[] = [];

beforeAll(async () => {
  port = await freePort();
  const at = `127.0.0.1:${port}/typelm`;
  forms = [
    { name: "a / not percent-encoded", location: `postgres://lab:${SECRET}/x@${at}`, postgres: true },
    { name: "a # in the password", location: `postgres://lab:${SECRET}#x@${at}`, postgres: true },
    { name: "a ? in the password", location: `postgresql://lab:${SECRET}?x@${at}`, postgres: true },
    { name: "an @ in the password", location: `postgres://lab:${SECRET}@x@${at}`, postgres: true },
    { name: "a misspelt scheme", location: `postgress://lab:${SECRET}@${at}`, postgres: false },
    { name: "another database's scheme", location: `mysql://lab:${SECRET}@${at}`, postgres: false },
    { name: "a libpq keyword string", location: `host=127.0.0.1 port=${port} user=lab password=${SECRET} dbname=typelm`, postgres: false },
    { name: "a quoted password in a keyword string", location: `host=127.0.0.1 password='${SECRET} x' dbname=typelm`, postgres: false },
  ];
  LabStore.open(join(dir, "lab.sqlite")).startRun({ kind: "evaluation", name: "local" });
});
afterAll(async () => {
  closeStoreSync(join(dir, "lab.sqlite"));
  rmSync(dir, { recursive: true, force: true });
  resetConfiguration();
  await closePostgresPools();
});

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await runCli(argv, { stdout: (t) => { out += t; }, stderr: (t) => { out += t; }, cwd: dir, env });
  return { code, out };
}

describe("a store location is shown without its password", () => {
  it("shownUrl drops everything up to the last @, whatever the password holds", () => {
    expect(shownUrl(`postgres://lab:${SECRET}/x@db.example:5432/typelm`)).toBe("postgres://db.example:5432/typelm");
    expect(shownUrl(`postgres://lab:${SECRET}#x@db.example/typelm`)).toBe("postgres://db.example/typelm");
    expect(shownUrl(`postgres://lab:${SECRET}?x@db.example/typelm?sslmode=require`)).toBe("postgres://db.example/typelm");
    expect(shownUrl(`postgres://lab:${SECRET}@x@db.example/typelm`)).toBe("postgres://db.example/typelm");
    expect(maskUrlCredentials(`cannot reach postgres://lab:${SECRET}/x@db.example/typelm now`)).toBe("cannot reach postgres://db.example/typelm now");
  });

  it("shownStore and error texts mask a password= setting", () => {
    expect(shownStore(`host=db password=${SECRET} dbname=lab`)).toBe("host=db password=[REDACTED] dbname=lab");
    expect(shownStore(`host=db password='${SECRET} x' dbname=lab`)).toBe("host=db password=[REDACTED] dbname=lab");
    expect(maskUrlCredentials(`failed: host=db password = ${SECRET}`)).toBe("failed: host=db password = [REDACTED]");
    expect(shownStore(join(dir, "lab.sqlite"))).toBe(join(dir, "lab.sqlite"));
  });

  it("an address that is neither a file nor a PostgreSQL URL is a ConfigurationError that does not show it", async () => {
    for (const { name, location, postgres } of forms) {
      if (postgres) continue;
      for (const [which, attempt] of [
        () => chooseStore(location, {}, dir),
        () => chooseStore(undefined, { TYPELM_LAB_URL: location }, dir),
        () => new Registry({ path: location }),
        () => LabStore.open({ url: location }),
        () => { configure((c) => { c.lab = { url: location }; }); return new LM("openai/gpt-4o-mini", { apiKey: "sk-test-store-secret", cache: true }).cachePath; },
      ].entries()) {
        let failure: unknown;
        try {
          attempt();
        } catch (error) {
          failure = error;
        }
        resetConfiguration();
        expect({ name, which, failure }).toEqual({ name, which, failure: expect.any(ConfigurationError) });
        expect({ name, message: (failure as Error).message }).toEqual({ name, message: expect.not.stringContaining(SECRET) });
      }
      const copied = await copyLab("lab.sqlite", location, dir).then(() => undefined, (e: unknown) => e);
      expect({ name, copied }).toEqual({ name, copied: expect.any(ConfigurationError) });
      expect((copied as Error).message).not.toContain(SECRET);
    }
  });

  it("runs, show, compare, rescore, view and lab copy (either side) never print it, with --store or TYPELM_LAB_URL", async () => {
    for (const { name, location } of forms) {
      const commands: [string[], NodeJS.ProcessEnv][] = [
        [["runs", "--store", location], {}],
        [["runs"], { TYPELM_LAB_URL: location }],
        [["show", "abc", "--store", location], {}],
        [["compare", "abc", "def", "--store", location], {}],
        [["rescore", "abc", "--metric", "m.mjs", "--store", location], {}],
        [["view", "--store", location, "--port", "0"], {}],
        [["lab", "copy", "lab.sqlite", location], {}],
        [["lab", "copy", location, "back.sqlite"], {}],
      ];
      for (const [argv, env] of commands) {
        const { code, out } = await cli(argv, env);
        expect({ name, argv: argv[0], code }).toEqual({ name, argv: argv[0], code: 1 });
        expect({ name, argv: argv[0], out }).toEqual({ name, argv: argv[0], out: expect.not.stringContaining(SECRET) });
        expect({ name, argv: argv[0], out }).toEqual({ name, argv: argv[0], out: expect.not.stringContaining("unexpected") });
        // A URL that does not parse says why: the password must be percent-encoded.
        if (name.includes("not percent-encoded")) expect(out).toContain("the URL does not parse. A password holding / ? # @ or % must be percent-encoded");
      }
    }
  }, 120_000);

  it("typelm run (built) with TYPELM_LAB_URL: an unreachable or malformed lab stops it before any model call, and the password is never printed", async () => {
    const fake = await startFakeProvider({ defaultReply: { loud: "X" } });
    try {
      const cwd = shoutProject(dir, "shout");
      const unreachable = { name: "an unreachable server", location: `postgres://lab:${SECRET}@127.0.0.1:${port}/typelm`, postgres: true };
      for (const { name, location } of [unreachable, ...forms]) {
        const env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-store-secrets", TYPELM_LAB_URL: location };
        // With the response cache (kept in the team's lab) and without it (--no-cache: only the lab's runs need it).
        for (const extra of [[], ["--no-cache"]]) {
          const ran = await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini", ...extra], cwd, env);
          expect({ name, extra, code: ran.code, requests: fake.requests.length }).toEqual({ name, extra, code: 1, requests: 0 });
          expect({ name, out: ran.stdout + ran.stderr }).toEqual({ name, out: expect.not.stringContaining(SECRET) });
          if (name === unreachable.name) expect(ran.stderr).toContain(`Cannot open the PostgreSQL lab store at postgres://127.0.0.1:${port}/typelm`);
        }
      }
    } finally {
      await fake.close();
    }
  }, 180_000);
});
