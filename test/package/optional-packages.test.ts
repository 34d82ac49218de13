/**
 * Optional peer dependencies (lib/optional.ts, optional-packages.ts), with the packages really missing: a project holding
 * a copy of what npm would install for typelm and links to its required dependencies only
 * (test/helpers/bare-install.ts), and child Node processes using it. Needs `npm run build` first.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigurationError } from "../../lib/errors.js";
import { OPTIONAL_PACKAGES, installCommand, missingPackageError, missingPackageOf, type OptionalPackage } from "../../lib/optional-packages.js";
import { REPO, bareInstall, repoPackageJson, requiredDependencies, type BareInstall } from "../helpers/bare-install.js";

const OPENAI_LINE = "npm install openai@^6.49.0";
const ANTHROPIC_LINE = "npm install @anthropic-ai/sdk@^1.11.0";
const OLLAMA_LINE = "npm install ollama@^0.6.4";
const OTEL_SDK_LINE = "npm install @opentelemetry/sdk-trace-base@^2.12.1 @opentelemetry/exporter-trace-otlp-http@^0.223.1 @opentelemetry/resources@^2.12.1";
const IOREDIS_LINE = "npm install ioredis@^6.0.0";
const CHARTS_LINE = "npm install vega@^6.4.0 vega-lite@^6.4.3 @resvg/resvg-js@^2.6.2";
const OTEL_SDK = ["@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources"];
const CHARTS = ["vega", "vega-lite", "@resvg/resvg-js"];

/** What a child script prints for an error: enough to tell a ConfigurationError from anything else. */
const PRELUDE = `
import { ConfigurationError } from "typelm";
const shown = (e) => ({ name: e?.name, configuration: e instanceof ConfigurationError, code: e?.code, message: String(e?.message).split("\\n")[0] });
const attempt = async (work) => { try { const value = await work(); return { ok: true, value }; } catch (e) { return shown(e); } };
`;

/** Runs `body` (after PRELUDE) in `install`; the script prints one JSON line, returned parsed. */
async function runJson(install: BareInstall, body: string, env?: NodeJS.ProcessEnv): Promise<any> {
  const r = await install.run(`${PRELUDE}\n${body}`, env);
  if (r.code !== 0 || r.stderr !== "") throw new Error(`child exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

const missing = (message: string) => ({ name: "ConfigurationError", configuration: true, message });

describe("the table of optional packages", () => {
  test("each range is the caret of the version package.json pins (or equals its peer range)", () => {
    const pkg = repoPackageJson() as Record<string, Record<string, string> | undefined>;
    for (const [name, range] of Object.entries(OPTIONAL_PACKAGES)) {
      const peer = pkg.peerDependencies?.[name];
      const pinned = pkg.devDependencies?.[name] ?? pkg.dependencies?.[name];
      expect({ name, declared: peer !== undefined || pinned !== undefined }).toEqual({ name, declared: true });
      if (peer !== undefined) expect({ name, range }).toEqual({ name, range: peer });
      if (pinned !== undefined) expect({ name, range }).toEqual({ name, range: `^${pinned}` });
      // The installed one (what the tests run against) is that version.
      const installed = JSON.parse(readFileSync(join(REPO, "node_modules", name, "package.json"), "utf8")).version as string;
      expect({ name, range }).toEqual({ name, range: `^${installed}` });
    }
  });

  test("the message names the feature and the package and gives the install line", () => {
    const error = missingPackageError("openai", "The openai provider");
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.name).toBe("ConfigurationError");
    expect(error.message).toBe(`The openai provider needs the "openai" package, which is not installed. Install it with: ${OPENAI_LINE}`);
    expect(missingPackageOf(error)).toEqual({ package: "openai", install: OPENAI_LINE });
    expect(missingPackageOf(new ConfigurationError("other"))).toBeUndefined();
    // Packages that only work together are installed together.
    for (const p of OTEL_SDK) expect(installCommand(p as OptionalPackage)).toBe(OTEL_SDK_LINE);
    for (const p of CHARTS) expect(installCommand(p as OptionalPackage)).toBe(CHARTS_LINE);
    expect(missingPackageError("vega-lite", "Drawing a chart").message).toBe(
      `Drawing a chart needs the "vega-lite" package, which is not installed. Install it and the rest of the chart renderers with: ${CHARTS_LINE}`);
  });

  test("a bare install links every required dependency and no optional package", () => {
    const required = requiredDependencies();
    expect(required).toEqual(expect.arrayContaining(["zod", "@opentelemetry/api", "better-sqlite3", "csv-parse"]));
    for (const name of Object.keys(OPTIONAL_PACKAGES)) expect(required).not.toContain(name);
  });
});

describe("a project with typelm and none of its optional packages", () => {
  let bare: BareInstall;
  beforeAll(() => { bare = bareInstall(); });
  afterAll(() => bare?.remove());

  test("node_modules holds the copy of the package and the required dependencies only", () => {
    const shipped = JSON.parse(readFileSync(join(bare.typelm, "package.json"), "utf8")) as { main: string; exports: Record<string, { default: string }> };
    for (const file of [shipped.main, ...Object.values(shipped.exports).map((e) => e.default)]) expect({ file, there: existsSync(join(bare.typelm, file)) }).toEqual({ file, there: true });
    for (const name of Object.keys(OPTIONAL_PACKAGES)) expect({ name, there: existsSync(join(bare.dir, "node_modules", name)) }).toEqual({ name, there: false });
  });

  test("an OpenAI, Anthropic or Ollama model says which package to install, and sends nothing", async () => {
    const out = await runJson(bare, `
      import { LM, Predict, Signature } from "typelm";
      import { startFakeProvider } from "typelm/testing";
      import { z } from "zod";
      const Echo = Signature.define({ name: "Echo", description: "Echo it.", input: { text: z.string() }, output: { text: z.string() } });
      const fake = await startFakeProvider({ defaultReply: { text: "hello" } });
      const models = {
        openai: ["openai/gpt-4o-mini", { baseURL: fake.openaiBaseURL, apiKey: "sk-test" }],
        anthropic: ["anthropic/claude-haiku-4-5", { baseURL: fake.url, apiKey: "sk-ant-test" }],
        ollama: ["ollama/llama3.2", { baseURL: fake.url }],
      };
      const results = {};
      for (const [name, [id, options]] of Object.entries(models)) {
        const lm = new LM(id, options);
        results[name] = await attempt(async () => (await new Predict(Echo).call({ text: "hi" }, { lm })).text);
        // Asked again, the same answer.
        results[name + " again"] = await attempt(async () => (await new Predict(Echo).call({ text: "hi" }, { lm })).text);
      }
      await fake.close();
      console.log(JSON.stringify({ results, requests: fake.requests.length }));`);
    const openai = missing(`The openai provider needs the "openai" package, which is not installed. Install it with: ${OPENAI_LINE}`);
    const anthropic = missing(`The anthropic provider needs the "@anthropic-ai/sdk" package, which is not installed. Install it with: ${ANTHROPIC_LINE}`);
    const ollama = missing(`The ollama provider needs the "ollama" package, which is not installed. Install it with: ${OLLAMA_LINE}`);
    expect(out).toEqual({
      results: { openai, "openai again": openai, anthropic, "anthropic again": anthropic, ollama, "ollama again": ollama },
      requests: 0,
    });
  });

  test("MCPClient.connect says which package to install, over either transport", async () => {
    const out = await runJson(bare, `
      import { MCPClient } from "typelm";
      const results = {
        stdio: await attempt(() => MCPClient.connect({ command: process.execPath, args: ["-e", ""] })),
        http: await attempt(() => MCPClient.connect({ url: "http://127.0.0.1:9/mcp" })),
      };
      console.log(JSON.stringify(results));`);
    const mcp = missing(`MCPClient needs the "@modelcontextprotocol/sdk" package, which is not installed. Install it with: npm install @modelcontextprotocol/sdk@^1.32.2`);
    expect(out).toEqual({ stdio: mcp, http: mcp });
  });

  test("the otel subscriber exporting over OTLP, langfuse and newrelic say how to install the OpenTelemetry SDK", async () => {
    const out = await runJson(bare, `
      import { configure } from "typelm";
      const on = (name) => attempt(() => configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = [name]; }));
      const results = {};
      for (const name of ["otel", "langfuse", "newrelic"]) results[name] = await on(name);
      // Without an endpoint the otel subscriber only needs @opentelemetry/api (a regular dependency).
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      results["otel without an endpoint"] = await on("otel");
      console.log(JSON.stringify(results));`, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", LANGFUSE_PUBLIC_KEY: "pk-lf-test", LANGFUSE_SECRET_KEY: "sk-lf-test",
      LANGFUSE_HOST: "http://127.0.0.1:9", NEW_RELIC_LICENSE_KEY: "nr-test", NEW_RELIC_OTLP_ENDPOINT: "http://127.0.0.1:9",
    });
    const sdk = (feature: string) => missing(
      `${feature} needs the "@opentelemetry/sdk-trace-base" package, which is not installed. Install it and the rest of the OpenTelemetry SDK with: ${OTEL_SDK_LINE}`);
    expect(out).toEqual({
      otel: sdk("The otel subscriber (OTLP export to OTEL_EXPORTER_OTLP_ENDPOINT)"),
      langfuse: sdk("The langfuse subscriber"),
      newrelic: sdk("The newrelic subscriber"),
      "otel without an endpoint": { ok: true },
    });
  });

  test('Memory with storageAdapter "redis" says how to install ioredis', async () => {
    const out = await runJson(bare, `
      import { Memory } from "typelm";
      const redis = await attempt(() => Memory.configure((c) => { c.storageAdapter = "redis"; }));
      console.log(JSON.stringify({ redis, adapter: Memory.config.storageAdapter }));`);
    expect(out).toEqual({
      redis: missing(`Memory with storageAdapter "redis" (c.redisClient, an ioredis client) needs the "ioredis" package, which is not installed. Install it with: ${IOREDIS_LINE}`),
      adapter: "in_memory",
    });
  });

  test("a lab store on PostgreSQL says how to install pg, and connects to nothing", async () => {
    const out = await runJson(bare, `
      import { LabStore } from "typelm";
      const team = await attempt(() => LabStore.open({ url: "postgres://lab@127.0.0.1:9/typelm" }));
      const byString = await attempt(() => LabStore.open("postgresql://lab@127.0.0.1:9/typelm"));
      console.log(JSON.stringify({ team, byString }));`);
    const pg = missing('The PostgreSQL lab store (c.lab = { url } or TYPELM_LAB_URL) needs the "pg" package, which is not installed. Install it with: npm install pg@^8.23.1');
    expect(out).toEqual({ team: pg, byString: pg });
  });

  test("a TypeScript experiment file says how to install tsx", async () => {
    const out = await runJson(bare, `
      import { loadExperimentFile } from "typelm";
      import { writeFileSync } from "node:fs";
      writeFileSync("mine.ts", "export default 1;\\n");
      const loaded = await attempt(() => loadExperimentFile("mine.ts"));
      console.log(JSON.stringify({ loaded }));`);
    expect(out).toEqual({
      loaded: missing('Loading a TypeScript experiment file needs the "tsx" package, which is not installed. Install it with: npm install tsx@^4.23.15'),
    });
  });

  test("chart helpers say how to install the chart renderers", async () => {
    const out = await runJson(bare, CHART_SCRIPT);
    const charts = missing(`Drawing a chart needs the "vega" package, which is not installed. Install it and the rest of the chart renderers with: ${CHARTS_LINE}`);
    expect(out).toEqual({ renderChart: charts, metrics: charts, confusion: charts });
  });

  test("typelm view shows an optimization without its chart, saying how to install the chart renderers", async () => {
    const bin = (JSON.parse(readFileSync(join(bare.typelm, "package.json"), "utf8")) as { bin: Record<string, string> }).bin.typelm!;
    const out = await runJson(bare, `
      import { LabStore } from "typelm";
      import { spawn } from "node:child_process";
      const lab = LabStore.open("view-lab.sqlite");
      const id = lab.startRun({ kind: "optimization", name: "search", config: {} });
      lab.recordTrial(id, { index: 0, kind: "baseline", parents: [], choices: {}, instructions: {}, demoIds: {}, score: 0.5, exampleScores: null,
        budgetSpent: 0, lmCalls: 0, inputTokens: 0, outputTokens: 0, cost: 0, durationMs: 1, error: null, data: {}, reused: 0 });
      lab.finishRun(id, { status: "completed", score: 0.5, bestTrial: 0, summary: {} });
      lab.close();
      const child = spawn(process.execPath, [${JSON.stringify(join(bare.typelm, bin))}, "view", "--store", "view-lab.sqlite", "--port", "0"]);
      let printed = "";
      const url = await new Promise((done) => child.stdout.on("data", (d) => { printed += d; const m = /(http:\\/\\/\\S+)/.exec(printed); if (m) done(m[1]); }));
      const page = await fetch(url + "runs/" + id);
      const text = await page.text();
      child.kill("SIGTERM");
      console.log(JSON.stringify({ status: page.status, note: /id="trials-chart-missing">([^<]*)</.exec(text)?.[1] ?? null, chart: text.includes('id="trials-chart"'), table: text.includes('<table id="trials">') }));`);
    expect(out).toEqual({ status: 200, note: `The trials chart needs the "vega" package: ${CHARTS_LINE}`, chart: false, table: true });
  });

  test("typelm init says a TypeScript experiment file needs tsx, with the install line", async () => {
    const bin = (JSON.parse(readFileSync(join(bare.typelm, "package.json"), "utf8")) as { bin: Record<string, string> }).bin.typelm!;
    const r = await bare.node([join(bare.typelm, bin), "init", "tickets"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout.trim().split("\n").pop()).toBe("Next: typelm run experiments/tickets.ts (TypeScript experiment files need tsx: npm install tsx@^4.23.15)");
  });

  test("typelm reproduce writes report.md and results.json without charts and says once how to get them", async () => {
    // The command as package.json "bin" names it (node_modules/.bin/typelm in a real install).
    const bin = (JSON.parse(readFileSync(join(bare.typelm, "package.json"), "utf8")) as { bin: Record<string, string> }).bin.typelm!;
    const r = await bare.node([join(bare.typelm, bin), "reproduce", "poem-sentiment", "--limit", "2"]);
    const report = join(bare.dir, "reports/poem-sentiment");
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: `${join(report, "report.md")}\n` });
    const line = `Charts skipped: the chart renderer "vega" is not installed; to draw them, run ${CHARTS_LINE} and run again`;
    expect(r.stderr.split("\n").filter((l) => l.includes("Charts skipped"))).toEqual([line]);
    expect(readdirSync(report).sort()).toEqual(["report.md", "results.json"]);
    const markdown = readFileSync(join(report, "report.md"), "utf8");
    expect(markdown).toContain(`Charts skipped: the chart renderer \`vega\` is not installed; to draw them, run \`${CHARTS_LINE}\` and run again.`);
    expect(markdown).not.toContain("Not drawn");
    expect(JSON.parse(readFileSync(join(report, "results.json"), "utf8")).experiment).toBe("poem-sentiment");
  }, 120_000);
});

/** renderChart, display.metrics and display.confusion, each as attempt() results (a PNG's first bytes when drawn). */
const CHART_SCRIPT = `
  import { Evaluation, FewShotExample, Predict, Signature } from "typelm";
  import { ScriptedLM } from "typelm/testing";
  import { display, renderChart } from "typelm/notebook";
  import { z } from "zod";
  const Label = Signature.define({ name: "Label", description: "Label it.", input: { text: z.string() }, output: { label: z.enum(["a", "b"]) } });
  const program = new Predict(Label);
  program.configure((c) => { c.lm = new ScriptedLM(() => ({ label: "a" })); });
  const examples = ["a1", "b1"].map((w) => new FewShotExample({ input: { text: w }, output: { label: w[0] }, id: w }));
  const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
  const png = (base64) => Buffer.from(base64, "base64").subarray(1, 4).toString();
  console.log(JSON.stringify({
    renderChart: await attempt(async () => Buffer.from((await renderChart({ mark: "bar", data: { values: [{ a: 1 }] }, encoding: { x: { field: "a", type: "quantitative" } } })).png).subarray(1, 4).toString()),
    metrics: await attempt(async () => png((await display.metrics(report))["image/png"])),
    confusion: await attempt(async () => png((await display.confusion(report, "label"))["image/png"])),
  }));`;

describe("with the optional package installed, the same calls work", () => {
  let bare: BareInstall;
  beforeAll(() => { bare = bareInstall(); });
  afterAll(() => bare?.remove());

  test("the three providers answer through the fake provider", async () => {
    for (const name of ["openai", "@anthropic-ai/sdk", "ollama"]) bare.link(name);
    const out = await runJson(bare, `
      import { LM, Predict, Signature } from "typelm";
      import { startFakeProvider } from "typelm/testing";
      import { z } from "zod";
      const Echo = Signature.define({ name: "Echo", description: "Echo it.", input: { text: z.string() }, output: { text: z.string() } });
      const fake = await startFakeProvider({ defaultReply: { text: "hello" } });
      const results = {};
      for (const [id, options] of [["openai/gpt-4o-mini", { baseURL: fake.openaiBaseURL, apiKey: "sk-test" }],
        ["anthropic/claude-haiku-4-5", { baseURL: fake.url, apiKey: "sk-ant-test" }], ["ollama/llama3.2", { baseURL: fake.url }]]) {
        results[id] = await attempt(async () => (await new Predict(Echo).call({ text: "hi" }, { lm: new LM(id, options) })).text);
      }
      await fake.close();
      console.log(JSON.stringify({ results, wires: fake.requests.map((r) => r.wire) }));`);
    expect(out).toEqual({
      results: { "openai/gpt-4o-mini": { ok: true, value: "hello" }, "anthropic/claude-haiku-4-5": { ok: true, value: "hello" }, "ollama/llama3.2": { ok: true, value: "hello" } },
      wires: ["openai", "anthropic", "ollama"],
    });
  });

  test("the otel, langfuse and newrelic subscribers switch on with the OpenTelemetry SDK", async () => {
    for (const name of OTEL_SDK) bare.link(name);
    const out = await runJson(bare, `
      import { configure } from "typelm";
      const on = (name) => attempt(() => configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = [name]; }));
      const results = {};
      for (const name of ["otel", "langfuse", "newrelic"]) results[name] = await on(name);
      configure((c) => { c.instrumentation.subscribers = []; });
      console.log(JSON.stringify(results));`, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", LANGFUSE_PUBLIC_KEY: "pk-lf-test", LANGFUSE_SECRET_KEY: "sk-lf-test",
      LANGFUSE_HOST: "http://127.0.0.1:9", NEW_RELIC_LICENSE_KEY: "nr-test", NEW_RELIC_OTLP_ENDPOINT: "http://127.0.0.1:9",
    });
    expect(out).toEqual({ otel: { ok: true }, langfuse: { ok: true }, newrelic: { ok: true } });
  });

  test('Memory with storageAdapter "redis" takes an ioredis client (and still asks for one without it)', async () => {
    bare.link("ioredis");
    const out = await runJson(bare, `
      import { Memory } from "typelm";
      import { Redis } from "ioredis";
      const withoutClient = await attempt(() => Memory.configure((c) => { c.storageAdapter = "redis"; }));
      const client = new Redis({ lazyConnect: true });
      const withClient = await attempt(() => Memory.configure((c) => { c.storageAdapter = "redis"; c.redisClient = client; }));
      client.disconnect();
      console.log(JSON.stringify({ withoutClient, withClient, adapter: Memory.config.storageAdapter }));`);
    expect(out).toEqual({
      withoutClient: missing('Memory: storageAdapter "redis" needs c.redisClient (an ioredis client), received undefined'),
      withClient: { ok: true },
      adapter: "redis",
    });
  });

  test("charts need all three renderers: the message names the one missing, then they draw", async () => {
    bare.link("vega");
    const partly = await runJson(bare, CHART_SCRIPT);
    const charts = missing(`Drawing a chart needs the "vega-lite" package, which is not installed. Install it and the rest of the chart renderers with: ${CHARTS_LINE}`);
    expect(partly).toEqual({ renderChart: charts, metrics: charts, confusion: charts });
    for (const name of CHARTS) bare.link(name);
    const drawn = await runJson(bare, CHART_SCRIPT);
    expect(drawn).toEqual({ renderChart: { ok: true, value: "PNG" }, metrics: { ok: true, value: "PNG" }, confusion: { ok: true, value: "PNG" } });
  }, 60_000);
});

describe("only a package that is not installed becomes a ConfigurationError", () => {
  let bare: BareInstall;
  beforeAll(() => { bare = bareInstall(); });
  afterAll(() => bare?.remove());

  /** Writes a stand-in package into the project's node_modules. */
  function standIn(name: string, packageJson: Record<string, unknown>, files: Record<string, string> = {}): void {
    const dir = join(bare.dir, "node_modules", name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "0.0.0", ...packageJson }));
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  }

  test("a file missing inside the package, a dependency of it missing, or its own error propagate unchanged", async () => {
    standIn("openai", { main: "missing.js" });
    standIn("ollama", { type: "module", main: "index.js" }, { "index.js": 'import "left-pad-not-installed";\nexport class Ollama {}\n' });
    standIn("@anthropic-ai/sdk", { main: "index.js" }, { "index.js": 'throw new Error("the SDK failed to start");\n' });
    standIn("@opentelemetry/sdk-trace-base", { main: "missing.js" });
    const out = await runJson(bare, `
      import { LM, Predict, Signature, configure } from "typelm";
      import { z } from "zod";
      const Echo = Signature.define({ name: "Echo", description: "Echo it.", input: { text: z.string() }, output: { text: z.string() } });
      const call = (id) => attempt(() => new Predict(Echo).call({ text: "hi" }, { lm: new LM(id, { baseURL: "http://127.0.0.1:9", apiKey: "k" }) }));
      const results = { openai: await call("openai/gpt-4o-mini"), ollama: await call("ollama/llama3.2"), anthropic: await call("anthropic/claude-haiku-4-5") };
      results.otel = await attempt(() => configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["otel"]; }));
      console.log(JSON.stringify(results));`, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(out.openai).toMatchObject({ configuration: false, code: "ERR_MODULE_NOT_FOUND", message: expect.stringContaining("missing.js") });
    expect(out.ollama).toMatchObject({ configuration: false, code: "ERR_MODULE_NOT_FOUND", message: expect.stringContaining("left-pad-not-installed") });
    expect(out.anthropic).toEqual({ name: "Error", configuration: false, message: "the SDK failed to start" });
    expect(out.otel).toMatchObject({ configuration: false, code: "MODULE_NOT_FOUND", message: expect.stringContaining("sdk-trace-base") });
  });
});

describe("importing typelm loads no optional package and not @opentelemetry/api", () => {
  let bare: BareInstall;
  /** Packages that throw when loaded: present, so only loading them (not resolving) can fail. */
  const TRIPWIRES = [...Object.keys(OPTIONAL_PACKAGES), "@opentelemetry/api"];
  beforeAll(() => {
    bare = bareInstall({ without: ["@opentelemetry/api"] });
    for (const name of TRIPWIRES) {
      const dir = join(bare.dir, "node_modules", name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "0.0.0", main: "index.js" }));
      writeFileSync(join(dir, "index.js"), `throw new Error("tripwire: ${name} was loaded");\n`);
    }
  });
  afterAll(() => bare?.remove());

  test("the three entry points import, and a prediction, an evaluation, in-memory Memory and the logger run", async () => {
    const out = await runJson(bare, `
      import * as typelm from "typelm";
      import * as testing from "typelm/testing";
      import * as notebook from "typelm/notebook";
      import { z } from "zod";
      const { Evaluation, FewShotExample, Memory, Predict, Signature, configure } = typelm;
      const lines = [];
      configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["logger"]; c.logger.output = (line) => lines.push(line); });
      const Label = Signature.define({ name: "Label", description: "Label it.", input: { text: z.string() }, output: { label: z.enum(["a", "b"]) } });
      const program = new Predict(Label);
      program.configure((c) => { c.lm = new testing.ScriptedLM(() => ({ label: "a" })); });
      const predicted = (await program.call({ text: "a1" })).label;
      const examples = ["a1", "b1"].map((w) => new FewShotExample({ input: { text: w }, output: { label: w[0] }, id: w }));
      const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
      const stored = await Memory.manager.retrieveMemory(await Memory.manager.storeMemory("hello", { userId: "u" }));
      const table = notebook.display.examples(examples)["text/plain"].length > 0;
      console.log(JSON.stringify({ predicted, accuracy: report.metrics.accuracy, memory: stored.text, table, logged: lines.length > 0 }));`);
    expect(out).toEqual({ predicted: "a", accuracy: 0.5, memory: "hello", table: true, logged: true });
  });

  test("@opentelemetry/api loads when a subscriber needs it, not before", async () => {
    const out = await runJson(bare, `
      import { configure } from "typelm";
      console.log(JSON.stringify(await attempt(() => configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["otel"]; }))));`);
    expect(out).toMatchObject({ configuration: false, message: "tripwire: @opentelemetry/api was loaded" });
  });

  test("the optional packages load when their feature is used, not before", async () => {
    const out = await runJson(bare, `
      import { LM, Predict, Signature } from "typelm";
      import { renderChart } from "typelm/notebook";
      import { z } from "zod";
      const Echo = Signature.define({ name: "Echo", description: "Echo it.", input: { text: z.string() }, output: { text: z.string() } });
      console.log(JSON.stringify({
        openai: await attempt(() => new Predict(Echo).call({ text: "hi" }, { lm: new LM("openai/gpt-4o-mini", { baseURL: "http://127.0.0.1:9", apiKey: "k" }) })),
        chart: await attempt(() => renderChart({ mark: "bar" })),
      }));`);
    expect(out).toMatchObject({ openai: { message: "tripwire: openai was loaded" }, chart: { message: "tripwire: vega was loaded" } });
  });
});
