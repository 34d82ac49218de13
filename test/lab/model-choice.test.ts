import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chooseModel, firstOllamaModel } from "../../lib/lab/experiment/model-choice.js";
import { SimulatedLM } from "../../lib/testing/simulated-lm.js";

/** A stand-in for a local Ollama's model list (GET /api/tags), and one that never answers. */
let ollama: Server;
let silent: Server;
/** Answers /api/tags with headers and half a body, then nothing. */
let stalled: Server;
let stalledHost = "";
let host = "";
let silentHost = "";
let tagsRequests = 0;
beforeAll(async () => {
  ollama = createServer((req, res) => {
    tagsRequests++;
    if (req.url === "/api/tags") res.end(JSON.stringify({ models: [{ name: "qwen2.5:0.5b" }, { name: "llama3.2:1b" }] }));
    else res.writeHead(404).end();
  });
  silent = createServer(() => { /* never answers */ });
  stalled = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"models":[{"name":"qwen');
  });
  await Promise.all([ollama, silent, stalled].map((s) => new Promise<void>((done) => s.listen(0, "127.0.0.1", done))));
  stalledHost = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
  host = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`;
  silentHost = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  silent.closeAllConnections();
  stalled.closeAllConnections();
  await Promise.all([ollama, silent, stalled].map((s) => new Promise((done) => s.close(done))));
});

describe("chooseModel", () => {
  it("takes --lm first, then TYPELM_LM, then a local Ollama's first model, then the stand-in", async () => {
    const env = { TYPELM_LM: "ollama/from-env", OLLAMA_HOST: host };
    expect(await chooseModel({ lm: "ollama/from-flag", env })).toMatchObject({ id: "ollama/from-flag", source: "--lm", standIn: false });
    expect(await chooseModel({ env })).toMatchObject({ id: "ollama/from-env", source: "TYPELM_LM", standIn: false });
    const before = tagsRequests;
    const local = await chooseModel({ env: { OLLAMA_HOST: host } });
    expect(local).toMatchObject({ id: "ollama/qwen2.5:0.5b", source: "ollama", standIn: false });
    expect(local.description).toBe("ollama/qwen2.5:0.5b (from the local Ollama server, temperature 0)");
    expect(tagsRequests).toBe(before + 1);
    const offline = await chooseModel({ env: { OLLAMA_HOST: "http://127.0.0.1:9" } });
    expect(offline).toMatchObject({ id: "simulated/stand-in", source: "stand-in", standIn: true });
    expect(offline.lm).toBeInstanceOf(SimulatedLM);
    expect(offline.description).toContain("it is not a language model");
  });

  it("gives up on an Ollama that does not answer within the probe time", async () => {
    const started = Date.now();
    expect(await firstOllamaModel(silentHost, 200)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await chooseModel({ env: { OLLAMA_HOST: silentHost }, ollamaProbeMs: 200 })).standIn).toBe(true);
  });

  it("gives up on one that sends its headers and then stops half-way through the model list", async () => {
    const started = Date.now();
    expect(await firstOllamaModel(stalledHost, 200)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
