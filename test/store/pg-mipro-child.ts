// Run by pg-writers.test.ts in a child process (through jest, since Node 20 cannot run .ts itself):
// the MIPROv2 optimization of test/optimize/resume-setup.ts recorded into the team's lab at
// TYPELM_CHILD_LAB_URL, slowed by a per-call latency so the parent can kill it midway with SIGKILL.
import { it } from "@jest/globals";
import { configure } from "../../lib/config.js";
import { runOptimization } from "../optimize/resume-setup.js";

it("runs one optimization for the parent test", async () => {
  const url = process.env.TYPELM_CHILD_LAB_URL;
  if (url === undefined) throw new Error("TYPELM_CHILD_LAB_URL is not set: this file is run by test/store/pg-writers.test.ts");
  configure((c) => { c.lab = { url }; });
  await runOptimization({ latencyMs: Number(process.env.TYPELM_CHILD_LATENCY ?? "0") });
}, 120000);
