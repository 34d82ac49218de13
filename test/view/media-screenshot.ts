// Takes docs/viewer-media.png: `node node_modules/tsx/dist/cli.mjs test/view/media-screenshot.ts`
// (Chromium at /usr/bin/chromium). An example whose inputs hold a picture of the shapes dataset, two
// more in a list, a WAV clip and a PDF, and whose model call sent a picture.
import { join } from "node:path";
import { closeStoreSync } from "../../lib/store/db.js";
import { startViewer } from "../../lib/view/server.js";
import { launch } from "./browser.js";
import { fixtureOn, removeFixtures } from "./fixture.js";
import { mediaCall, mediaRow } from "../store/media-fixture.js";

async function main(): Promise<void> {
  let runId = "";
  const { fixture, location } = await fixtureOn("sqlite", (lab) => {
    runId = lab.startRun({ kind: "evaluation", name: "count the shapes" });
    lab.recordExample(runId, mediaRow(0, 12), [mediaCall()]);
    lab.finishRun(runId, { status: "completed", score: 1, summary: {} });
  });
  const viewer = await startViewer({ store: location, port: 0 });
  const { browser, close } = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${viewer.url}runs/${runId}/rows/0`, { waitUntil: "networkidle0" });
    await page.screenshot({ path: join(process.cwd(), "docs", "viewer-media.png") as `${string}.png`, fullPage: true });
  } finally {
    await close();
    await viewer.close();
    closeStoreSync(fixture.path);
    removeFixtures();
  }
}

main().catch((error: unknown) => { console.error(error); process.exitCode = 1; });
