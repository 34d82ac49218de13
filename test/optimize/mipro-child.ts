// Run by resume.test.ts in a child process (through jest, since Node 20 cannot run .ts itself):
// one MIPROv2 optimization recorded into the lab file named by TYPELM_CHILD_LAB, slowed by a
// per-call latency so the parent can kill it midway with SIGKILL.
import { it } from "@jest/globals";
import { configure } from "../../lib/config.js";
import { runOptimization } from "./resume-setup.js";

it("runs one optimization for the parent test", async () => {
  const lab = process.env.TYPELM_CHILD_LAB;
  if (lab === undefined) throw new Error("TYPELM_CHILD_LAB is not set: this file is run by test/optimize/resume.test.ts");
  configure((c) => { c.lab = { path: lab }; });
  await runOptimization({ latencyMs: Number(process.env.TYPELM_CHILD_LATENCY ?? "0") });
}, 120000);
