// Takes the screenshots in docs/viewer.md: `node node_modules/tsx/dist/cli.mjs test/view/screenshots.ts`
// (Chromium at /usr/bin/chromium). The pages show the test fixture's store, hostile text included.
import { join } from "node:path";
import { startViewer } from "../../lib/view/server.js";
import { launch } from "./browser.js";
import { matrixFixture } from "./matrix-fixture.js";

async function main(): Promise<void> {
  // The viewer's fixture with the matrix's three runs of the same examples (and one of another set).
  const { fixture, runs } = await matrixFixture("sqlite");
  const viewer = await startViewer({ store: fixture.path, port: 0 });
  const { browser, close } = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const shots: [string, string][] = [
      ["viewer-runs.png", ""],
      ["viewer-evaluation.png", `runs/${fixture.evalA}?size=12`],
      ["viewer-example.png", `runs/${fixture.evalA}/rows/7`],
      ["viewer-optimization.png", `runs/${fixture.optimization}`],
      ["viewer-compare.png", `compare/${fixture.evalA}/${fixture.evalB}`],
      ["viewer-registry.png", "registry/sentiment"],
      ["viewer-matrix.png", `matrix?runs=${runs.join(",")}&size=12`],
      ["viewer-matrix-tests.png", `matrix/tests?runs=${runs.join(",")}`],
    ];
    for (const [file, path] of shots) {
      await page.goto(viewer.url + path, { waitUntil: "load" });
      await page.screenshot({ path: join(process.cwd(), "docs", file) as `${string}.png`, fullPage: false });
    }
  } finally {
    await close();
    await viewer.close();
  }
}

main().catch((error: unknown) => { console.error(error); process.exitCode = 1; });
