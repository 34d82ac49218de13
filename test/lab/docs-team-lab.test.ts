// The two guides that say where `typelm run` records agree with each other and with the code
// (test/lab/team-lab-run.test.ts: with TYPELM_LAB_URL, the runs go to the team's lab, nothing to the file).
import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A guide's text with its line breaks and repeated spaces as single spaces, so a rule wrapped anywhere still reads as one sentence. */
const guide = (name: string) => readFileSync(join(process.cwd(), "docs", name), "utf8").replace(/\s+/g, " ");

describe("where typelm run records, in the guides", () => {
  it("both guides say typelm run and reproduce record into the team's lab when TYPELM_LAB_URL names one; neither says they always use the file", () => {
    for (const name of ["team-lab.md", "lab-and-cli.md"]) {
      const text = guide(name);
      expect({ name, says: text.includes("`typelm run` and `typelm reproduce` record into the team's lab when `TYPELM_LAB_URL`") }).toEqual({ name, says: true });
      expect({ name, says: /`typelm run` and `typelm reproduce` record into the working folder's `\.typelm\/lab\.sqlite`;/.test(text) }).toEqual({ name, says: false });
    }
  });
});
