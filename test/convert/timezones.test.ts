import { describe, it, expect } from "@jest/globals";
import { spawnSync } from "node:child_process";
import path from "node:path";

// Jest gives each test file a copy of process.env, so setting TZ inside a test does not move the
// host zone. The date assertions are therefore re-run in child processes started with TZ set.
const root = process.cwd();
const jestBin = path.join(root, "node_modules", "jest", "bin", "jest.js");

describe("date conversion in other host time zones", () => {
  it.each([
    ["America/Los_Angeles", 480],
    ["Asia/Tokyo", -540],
  ])("passes every dates.test.ts assertion under TZ=%s", (zone, offset) => {
    const run = spawnSync(process.execPath, [jestBin, "--ci", "--runTestsByPath", "test/convert/dates.test.ts"], {
      cwd: root,
      encoding: "utf8",
      env: {
        ...process.env,
        TZ: zone,
        TYPELM_EXPECT_TZ_OFFSET: String(offset),
        NODE_OPTIONS: "--experimental-vm-modules",
      },
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect({ status: run.status, output }).toEqual({ status: 0, output: expect.stringContaining("is the zone the parent run asked for") });
    expect(output).not.toMatch(/failed/);
  }, 60000);
});
