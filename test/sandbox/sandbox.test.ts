import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ValidationError } from "../../lib/errors.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { Sandbox } from "../../lib/sandbox/sandbox.js";

const MiB = 1024 * 1024;

describe("Sandbox: running code", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create({ timeoutMs: 500 });
  });
  afterAll(() => sandbox.dispose());

  it("returns the completion value of the script", async () => {
    expect(await sandbox.run("1 + 2")).toEqual({ output: "", result: 3, error: null });
    expect((await sandbox.run("({ a: [1, 'two', null], b: true })")).result).toEqual({ a: [1, "two", null], b: true });
    expect((await sandbox.run("undefined")).result).toBeUndefined();
    expect((await sandbox.run("10n ** 20n")).result).toBe(10n ** 20n);
  });

  it("keeps top-level declarations between runs", async () => {
    await sandbox.run("const base = 41; let counter = 0; function bump() { return ++counter; }");
    expect((await sandbox.run("base + 1")).result).toBe(42);
    await sandbox.run("bump(); bump();");
    expect((await sandbox.run("counter")).result).toBe(2);
  });

  it("supports top-level await, and its declarations persist too", async () => {
    const first = await sandbox.run("const later = await new Promise((resolve) => resolve(20)); later + 1");
    expect(first).toEqual({ output: "", result: 21, error: null });
    expect((await sandbox.run("later * 2")).result).toBe(40);
  });

  it("captures console output as text", async () => {
    const { output, result } = await sandbox.run(
      "console.log('hello', 42, { a: 1 }, [1, 2]); console.info('info'); console.warn('warn'); console.error(new TypeError('bad')); 'done'",
    );
    expect(output).toBe('hello 42 {"a":1} [1,2]\ninfo\nwarn\nTypeError: bad\n');
    expect(result).toBe("done");
  });

  it("reports code errors with their type, message and line, without throwing", async () => {
    expect(await sandbox.run("undefinedVariable + 1")).toEqual({
      output: "",
      result: undefined,
      error: "ReferenceError: 'undefinedVariable' is not defined (line 1)",
    });
    expect((await sandbox.run("const o = null;\no.field")).error).toMatch(/^TypeError: cannot read property 'field' of null \(line 2\)$/);
    expect((await sandbox.run("this is not javascript")).error).toMatch(/^SyntaxError: /);
    expect((await sandbox.run("await Promise.reject(new RangeError('nope'))")).error).toBe("RangeError: nope (line 1)");
    expect((await sandbox.run("throw 'plain string'")).error).toBe('Uncaught "plain string"');
  });

  it("keeps output printed before an error", async () => {
    const run = await sandbox.run("console.log('before'); missing()");
    expect(run.output).toBe("before\n");
    expect(run.error).toMatch(/ReferenceError/);
  });

  it("reports a promise that can never settle instead of hanging", async () => {
    const run = await sandbox.run("await new Promise(() => {})");
    expect(run.error).toMatch(/never settle/);
  });

  it("runs concurrent calls one after another", async () => {
    await sandbox.run("let shared = 0");
    const runs = await Promise.all([1, 2, 3, 4].map((n) => sandbox.run(`shared += ${n}; shared`)));
    expect(runs.map((r) => r.result)).toEqual([1, 3, 6, 10]);
  });
});

describe("Sandbox: host tools", () => {
  it("exposes tools as async functions, callable after awaits and in parallel", async () => {
    const calls: unknown[] = [];
    const sandbox = await Sandbox.create({
      tools: {
        lookup: async (args) => {
          calls.push(args);
          await new Promise((resolve) => setTimeout(resolve, 5));
          return { found: (args as { id: number }).id * 10 };
        },
        double: (args) => (args as number) * 2,
      },
    });
    try {
      const run = await sandbox.run(`
        const first = await lookup({ id: 1 });
        const second = await lookup({ id: 2 });
        const both = await Promise.all([lookup({ id: 3 }), double(21)]);
        [first.found, second.found, both[0].found, both[1]]`);
      expect(run).toEqual({ output: "", result: [10, 20, 30, 42], error: null });
      expect(calls).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
      const inThen = await sandbox.run("await Promise.resolve(4).then((n) => double(n))");
      expect(inThen.result).toBe(8);
    } finally {
      sandbox.dispose();
    }
  });

  it("turns a failing tool into a catchable guest error", async () => {
    const sandbox = await Sandbox.create({
      tools: { explode: () => { throw new Error("disk on fire"); } },
    });
    try {
      const caught = await sandbox.run("try { await explode({}); } catch (e) { e.name + ': ' + e.message }");
      expect(caught.result).toBe("ToolError: explode failed: disk on fire");
      expect((await sandbox.run("await explode({})")).error).toBe("ToolError: explode failed: disk on fire (line 1)");
    } finally {
      sandbox.dispose();
    }
  });

  it("applies the time limit to a tool that never answers", async () => {
    // A limit long enough that the guest reaches the tool call before it on a loaded machine (at 100 ms a
    // CI run beside another hit the limit while the code was still starting, without the tool call).
    const sandbox = await Sandbox.create({ timeoutMs: 1000, tools: { hang: () => new Promise(() => {}) } });
    try {
      const run = await sandbox.run("await hang()");
      expect(run.error).toBe("interrupted: time limit of 1000 ms exceeded while waiting for a tool call");
      expect((await sandbox.run("'still here'")).result).toBe("still here");
    } finally {
      sandbox.dispose();
    }
  });

  it("ends a run that calls tools more than maxToolCalls times, even when the guest catches the error", async () => {
    let calls = 0;
    // The time limit is far away: the error names the cap, so the cap is what stopped the loop.
    const sandbox = await Sandbox.create({ timeoutMs: 10_000, maxToolCalls: 5, tools: { ping: (n) => { calls += 1; return n; } } });
    try {
      const run = await sandbox.run("let n = 0; for (;;) { try { ping(n++) } catch (e) {} }");
      expect(run.error).toBe("tool call limit of 5 calls per run exceeded (maxToolCalls)");
      expect(calls).toBe(5);
      // The count is per run: the next run may call tools again.
      calls = 0;
      expect(await sandbox.run("(await Promise.all([ping(1), ping(2), ping(3), ping(4), ping(5)])).length")).toEqual({
        output: "", result: 5, error: null,
      });
      expect(calls).toBe(5);
    } finally {
      sandbox.dispose();
    }
  });

  it("caps tool calls at 1000 per run by default, so a loop cannot queue unbounded host calls", async () => {
    let calls = 0;
    const sandbox = await Sandbox.create({ timeoutMs: 10_000, tools: { lookup: async () => { calls += 1; return 1; } } });
    try {
      const run = await sandbox.run("for (let i = 0; i < 1e7; i++) lookup({ i }); 'queued'");
      expect(run.error).toMatch(/^tool call limit of 1000 calls per run exceeded \(maxToolCalls\)/);
      expect(calls).toBe(1000);
      expect((await sandbox.run("await lookup({})")).result).toBe(1);
    } finally {
      sandbox.dispose();
    }
  });

  it("rejects tool names that are not identifiers", async () => {
    await expect(Sandbox.create({ tools: { "bad-name": () => 1 } })).rejects.toThrow(ValidationError);
    await expect(Sandbox.create({ tools: { console: () => 1 } })).rejects.toThrow(/identifier/);
  });
});

describe("Sandbox: escapes and abuse are contained", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create({ timeoutMs: 200, memoryLimitBytes: 8 * MiB });
  });
  afterAll(() => sandbox.dispose());

  async function expectHealthy(which: Sandbox = sandbox): Promise<void> {
    expect(await which.run("[1, 2, 3].map((n) => n * 2)")).toEqual({ output: "", result: [2, 4, 6], error: null });
  }

  it("has no process, require, fetch or module loading", async () => {
    expect((await sandbox.run("[typeof process, typeof require, typeof fetch, typeof module, typeof Deno]")).result).toEqual(
      Array(5).fill("undefined"),
    );
    expect((await sandbox.run("process.exit(1)")).error).toBe("ReferenceError: 'process' is not defined (line 1)");
    expect((await sandbox.run("require('fs')")).error).toBe("ReferenceError: 'require' is not defined (line 1)");
    await expectHealthy();
  });

  it("cannot reach the host through the Function constructor", async () => {
    const run = await sandbox.run("globalThis.constructor.constructor('return process')()");
    expect(run.error).toMatch(/^ReferenceError: 'process' is not defined/);
    expect((await sandbox.run("(function(){ return this })().process")).result).toBeUndefined();
    await expectHealthy();
  });

  it("cannot import modules", async () => {
    expect((await sandbox.run("await import('fs')")).error).toBe("ReferenceError: could not load module 'fs'");
    expect((await sandbox.run("await import('node:child_process')")).error).toMatch(/could not load module/);
    await expectHealthy();
  });

  it("interrupts an infinite loop at the time limit and keeps earlier state", async () => {
    await sandbox.run("const keep = 'kept'");
    const started = Date.now();
    expect((await sandbox.run("while (true) {}")).error).toBe("interrupted: time limit of 200 ms exceeded");
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await sandbox.run("keep")).result).toBe("kept");
  });

  it("interrupts an infinite loop inside a promise callback", async () => {
    const run = await sandbox.run("Promise.resolve().then(() => { while (true) {} }); 'returned'");
    expect(run.error).toBe("interrupted: time limit of 200 ms exceeded");
    await expectHealthy();
  });

  it("interrupts an endless chain of promise jobs", async () => {
    const run = await sandbox.run("function spin() { Promise.resolve().then(spin); } spin(); 1");
    expect(run.error).toMatch(/^interrupted: time limit of 200 ms exceeded/);
    await expectHealthy();
    // A chain that also holds on to every promise may run out of memory before it runs out of time.
    const growing = await sandbox.run("function grow() { return Promise.resolve().then(grow); } grow(); 1");
    expect(growing.error).toMatch(/^(interrupted: time limit of 200 ms exceeded|out of memory: memory limit)/);
    await expectHealthy();
  });

  it("stops memory bombs with an out-of-memory error and resets the guest", async () => {
    // A time limit the bombs cannot reach first on a busy machine: memory is what must stop them.
    const roomy = await Sandbox.create({ timeoutMs: 30_000, memoryLimitBytes: 8 * MiB });
    for (const bomb of [
      "const objects = []; for (;;) objects.push({ n: objects.length })",
      "Promise.resolve().then(() => { const held = []; for (;;) held.push({}) }); 'returned'",
      "const caught = []; for (;;) { try { caught.push(new Float64Array(1e5)) } catch (e) {} }",
      "const buffers = []; for (;;) buffers.push(new Float64Array(1e5))",
      "const strings = []; for (;;) strings.push('x'.repeat(1e5) + strings.length)",
      "'x'.repeat(1e9)",
    ]) {
      const run = await roomy.run(bomb);
      expect(run.error).toBe(
        `out of memory: memory limit of ${8 * MiB} bytes exceeded; the sandbox was reset and earlier state is lost`,
      );
      expect(await roomy.run("[1, 2, 3].map((n) => n * 2)")).toEqual({ output: "", result: [2, 4, 6], error: null });
    }
    roomy.dispose();
    // Six heaps filled to 8 MiB: 15.7 s on a busy 2-core machine (about 2 s idle), too close to the default 20 s.
  }, 90_000);

  it("stops unbounded recursion with a stack overflow error", async () => {
    expect((await sandbox.run("function down(n) { return down(n + 1) + 1 } down(0)")).error).toBe(
      "stack overflow: call stack limit of 262144 bytes exceeded (unbounded recursion?)",
    );
    expect((await sandbox.run("async function deep(n) { return await deep(n + 1) } await deep(0)")).error).toMatch(
      /^stack overflow/,
    );
    await expectHealthy();
  });

  it("bounds a huge console.log", async () => {
    // The output limit is what this checks. Building the 1 MB string alone took up to 190 ms of the 200 ms
    // limit on a busy 2-core machine (5 ms idle): a time limit the run cannot reach, as for the memory bombs.
    const roomy = await Sandbox.create({ timeoutMs: 30_000, memoryLimitBytes: 8 * MiB });
    try {
      const run = await roomy.run("console.log('x'.repeat(1e6)); for (let i = 0; i < 1000; i++) console.log(i); 'finished'");
      expect(run.result).toBe("finished");
      expect(run.output.length).toBeLessThan(20_100);
      expect(run.output.endsWith("[output truncated at 20000 characters]\n")).toBe(true);
      await expectHealthy(roomy);
    } finally {
      roomy.dispose();
    }
  });

  it("stops formatting console arguments once the output is full, and writes again in the next run", async () => {
    // Each log after the cut would otherwise still be formatted and copied out (about 0.3 ms each on a busy machine).
    const cut = await sandbox.run(
      "(() => { let formatted = 0; console.log('x'.repeat(30000)); console.log({ toJSON() { formatted++; return 1; } }); return formatted; })()",
    );
    expect(cut.result).toBe(0);
    expect(cut.output.endsWith("[output truncated at 20000 characters]\n")).toBe(true);
    expect(await sandbox.run("console.log('again'); 1")).toEqual({ output: "again\n", result: 1, error: null });
  });

  it("survives a thrown value whose getter loops forever", async () => {
    const run = await sandbox.run("throw { name: 'Trap', get message() { while (true) {} } }");
    expect(run.error).toMatch(/^interrupted: time limit/);
    await expectHealthy();
  });

  it("is unaffected by a guest that replaces JSON and console internals", async () => {
    await sandbox.run("JSON.stringify = () => 'hacked'; JSON.parse = () => 'hacked'; String = () => 'hacked'");
    const run = await sandbox.run("console.log({ a: 1 }); ({ b: 2 })");
    expect(run).toEqual({ output: '{"a":1}\n', result: { b: 2 }, error: null });
  });
});

describe("Sandbox: lifecycle and options", () => {
  it("rejects unsafe or invalid limits", async () => {
    await expect(Sandbox.create({ maxStackBytes: 1024 * 1024 })).rejects.toThrow(
      /maxStackBytes: expected an integer between 16384 and 262144, received 1048576/,
    );
    await expect(Sandbox.create({ timeoutMs: 0 })).rejects.toThrow(ValidationError);
  });

  it("refuses to run after dispose, and dispose is idempotent", async () => {
    const sandbox = await Sandbox.create();
    expect((await sandbox.run("1")).result).toBe(1);
    sandbox.dispose();
    sandbox.dispose();
    await expect(sandbox.run("1")).rejects.toThrow(/disposed/);
  });

  it("creates, runs and disposes many sandboxes with no failed teardown (a leaked handle makes QuickJS's free fail)", async () => {
    const resets: TypelmEvent[] = [];
    const off = Instrumentation.subscribe("sandbox.reset", (e) => resets.push(e));
    try {
      for (let i = 0; i < 30; i++) {
        const sandbox = await Sandbox.create({ tools: { id: (x) => x, fail: () => { throw new Error("no"); } } });
        expect((await sandbox.run(`const o = await id({ i: ${i} }); await fail().catch(() => 0); o.i`)).result).toBe(i);
        expect((await sandbox.run("throw new TypeError('t')")).error).toBe("TypeError: t (line 1)");
        expect((await sandbox.run("await new Promise(() => {})")).error).toMatch(/never settle/);
        sandbox.dispose();
      }
      expect(resets).toEqual([]);
      // The measure works: a memory bomb is a real reset, reported once. Filling 4 MiB took 0.8-2.9 s on a
      // busy machine, past the default 1 s time limit: a limit the bomb cannot reach first, so memory stops it.
      const bombed = await Sandbox.create({ memoryLimitBytes: 4 * MiB, timeoutMs: 30_000 });
      await bombed.run("const all = []; for (;;) all.push({})");
      bombed.dispose();
      expect(resets.map((e) => e.payload["reason"])).toEqual(["out of memory"]);
    } finally {
      off();
    }
    // 30 sandboxes and a memory bomb: 5-6.5 s under load alone, past 20 s in a whole jest run on a busy 2-core machine.
  }, 90_000);

  it("compiles QuickJS's WebAssembly at most once per process and instantiates it per sandbox", async () => {
    (await Sandbox.create()).dispose(); // compiled by now, whatever ran before
    const wasm = (globalThis as unknown as { WebAssembly: Record<string, (...args: unknown[]) => unknown> }).WebAssembly;
    const original = { compile: wasm["compile"]!, instantiate: wasm["instantiate"]!, instantiateStreaming: wasm["instantiateStreaming"]! };
    let compiledFromBytes = 0;
    let instantiated = 0;
    const isModule = (value: unknown) => value instanceof (wasm["Module"] as unknown as new () => object);
    wasm["compile"] = (...args) => { compiledFromBytes += 1; return original.compile.apply(wasm, args); };
    wasm["instantiateStreaming"] = (...args) => { compiledFromBytes += 1; instantiated += 1; return original.instantiateStreaming.apply(wasm, args); };
    wasm["instantiate"] = (...args) => {
      if (!isModule(args[0])) compiledFromBytes += 1;
      instantiated += 1;
      return original.instantiate.apply(wasm, args);
    };
    try {
      const sandboxes = await Promise.all(Array.from({ length: 5 }, () => Sandbox.create()));
      const runs = await Promise.all(sandboxes.map((sandbox, i) => sandbox.run(`var mine = ${i}; mine * 10`)));
      expect(runs.map((r) => r.result)).toEqual([0, 10, 20, 30, 40]);
      // Separate guests: one sandbox's globals are not another's.
      expect((await sandboxes[0]!.run("typeof mine === 'number' ? mine : -1")).result).toBe(0);
      expect((await sandboxes[4]!.run("mine")).result).toBe(4);
      for (const sandbox of sandboxes) sandbox.dispose();
      expect(instantiated).toBe(5);
      expect(compiledFromBytes).toBe(0);
    } finally {
      Object.assign(wasm, original);
    }
  });
});
