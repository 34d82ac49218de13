// Takes docs/viewer-review.png, the review queue: `node node_modules/tsx/dist/cli.mjs test/view/review-screenshot.ts`
// (Chromium at /usr/bin/chromium). The queue shows the review tests' store (test/view/review-fixture.ts):
// one row reviewed from the keyboard (fail, with a note holding markup, shown as text), the next one
// under review, a corrected expected output open in its editor.
import { join } from "node:path";
import { startViewer } from "../../lib/view/server.js";
import { launch } from "./browser.js";
import { reviewLabFile } from "./review-fixture.js";

async function main(): Promise<void> {
  const { path } = reviewLabFile();
  const viewer = await startViewer({ store: path, port: 0, review: true, reviewer: "ann" });
  const { browser, close } = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 760 });
    await page.goto(viewer.reviewUrl!, { waitUntil: "load" });
    await page.keyboard.press("p");
    await page.keyboard.press("Enter");
    await page.waitForSelector('tr[data-example-id="q-0"][data-reviewed="pass"]');
    await page.keyboard.press("f");
    await page.keyboard.press("n");
    await page.keyboard.type("<b>wrong</b> number: the answer is one");
    await page.keyboard.press("Enter");
    await page.waitForSelector('tr[data-example-id="q-1"][data-reviewed="fail"]');
    await page.keyboard.press("3");
    await page.keyboard.press("e");
    await page.screenshot({ path: join(process.cwd(), "docs", "viewer-review.png") as `${string}.png` });
  } finally {
    await close();
    await viewer.close();
  }
}

await main();
