// Takes the screenshots in docs/viewer.md: `node node_modules/tsx/dist/cli.mjs test/view/screenshots.ts`
// (Chromium at /usr/bin/chromium). The pages show the test fixture's store, hostile text included.
import { join } from "node:path";
import { startViewer } from "../../lib/view/server.js";
import { launch } from "./browser.js";
import { addJudgedRuns, type JudgedRuns } from "./judged-fixture.js";
import { matrixFixture } from "./matrix-fixture.js";

async function main(): Promise<void> {
  // The viewer's fixture with the judged runs, and the matrix's three runs of the same examples (and one of another set).
  const judged: Partial<JudgedRuns> = {};
  const { fixture, runs } = await matrixFixture("sqlite", addJudgedRuns(judged));
  const viewer = await startViewer({ store: fixture.path, port: 0 });
  const { browser, close } = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    // [file, path, the id of an element to scroll to the top first, or "whole" for the whole page].
    const shots: [string, string, string?][] = [
      ["viewer-runs.png", ""],
      ["viewer-evaluation.png", `runs/${fixture.evalA}?size=12`],
      ["viewer-rescored.png", `runs/${judged.rescored}`],
      ["viewer-example.png", `runs/${judged.source}/rows/0`, "whole"],
      ["viewer-optimization.png", `runs/${fixture.optimization}`],
      ["viewer-instructions.png", `runs/${judged.repeats}`, "instructions"],
      ["viewer-compare.png", `compare/${fixture.evalA}/${fixture.evalB}`],
      ["viewer-registry.png", "registry/sentiment"],
      ["viewer-matrix.png", `matrix?runs=${runs.join(",")}&size=12`],
      ["viewer-matrix-tests.png", `matrix/tests?runs=${runs.join(",")}`],
    ];
    for (const [file, path, scrollTo] of shots) {
      await page.goto(viewer.url + path, { waitUntil: "load" });
      if (scrollTo !== undefined && scrollTo !== "whole") await page.$eval(`#${scrollTo}`, (e) => e.scrollIntoView());
      await page.screenshot({ path: join(process.cwd(), "docs", file) as `${string}.png`, fullPage: scrollTo === "whole" });
    }
  } finally {
    await close();
    await viewer.close();
  }
}

main().catch((error: unknown) => { console.error(error); process.exitCode = 1; });
