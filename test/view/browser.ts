// Debian's Chromium driven by puppeteer-core, for the viewer's browser tests. Without /usr/bin/chromium
// the tests are skipped with a message saying how to install it; under CI=true that is a failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { closeStoreSync } from "../../lib/store/db.js";
import type { LabStore } from "../../lib/store/lab-store.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { CHROMIUM, fixtureOn, hasChromium, removeFixtures, type Engine, type Fixture } from "./fixture.js";

export const SKIP_MESSAGE = `The viewer's browser tests need Chromium at ${CHROMIUM} (Debian: sudo apt-get install chromium); skipped.`;

/** Whether to run the browser tests: true with Chromium; a clear skip without it, except in CI. */
export function browserTestsRun(): boolean {
  if (hasChromium) return true;
  if (process.env["CI"] === "true") throw new Error(`${SKIP_MESSAGE.replace("; skipped.", "")}: CI must run them (.ci/run installs it).`);
  console.warn(SKIP_MESSAGE);
  return false;
}

/** A headless Chromium with a fresh profile; `close()` stops it and removes the profile. */
export async function launch(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const { default: puppeteer } = await import("puppeteer-core");
  const profile = mkdtempSync(join(tmpdir(), "typelm-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Collects into `errors` what went wrong on `page`: a script error, a console error (a script the CSP
 * refused shows here), and a response of 400 or more (a failed load is told by its response, so the
 * console's "Failed to load resource" is left out, as is the browser's own favicon request).
 */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on("console", (message) => { if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text()); });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("response", (response) => {
    if (response.status() >= 400 && new URL(response.url()).pathname !== "/favicon.ico") errors.push(`${response.status()} ${response.url()}`);
  });
}

/** The fixture's lab on one engine, a viewer over it and a Chromium page, as the browser suites use them. */
export interface BrowsedLab {
  fixture: Fixture;
  location: string;
  viewer: Viewer;
  page: Page;
  /** Closes the browser, the viewer and the lab, and removes the fixtures. */
  close(): Promise<void>;
}

/** Builds the fixture on `engine` (with `extend`'s runs), runs `beforeViewer` on its lab (a snapshot), then starts the viewer and a page. */
export async function browseFixture(engine: Engine, beforeViewer?: (location: string) => Promise<void>, extend?: (lab: LabStore) => void): Promise<BrowsedLab> {
  const { fixture, location, stop } = await fixtureOn(engine, extend);
  await beforeViewer?.(location);
  const viewer = await startViewer({ store: location, port: 0 });
  const { browser, close: closeBrowser } = await launch();
  const page = await browser.newPage();
  return {
    fixture, location, viewer, page,
    async close() {
      await closeBrowser();
      await viewer.close();
      await stop();
      closeStoreSync(fixture.path);
      removeFixtures();
    },
  };
}
