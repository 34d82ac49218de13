/**
 * Media in the viewer, on the file and on the same lab in PostgreSQL: `/media/<sha256>` serves the
 * stored bytes with their type and `nosniff` (documents as attachments; 404 unknown, 400 malformed),
 * the pages keep a CSP whose img-src and media-src allow the viewer only, and in Chromium an example's
 * image is decoded, its clip is an audio player of the right type, its document a download link, and
 * an image sent in a model call's message is shown there too.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Browser, Page } from "puppeteer-core";
import { closeStoreSync } from "../../lib/store/db.js";
import type { LabStore } from "../../lib/store/lab-store.js";
import { startViewer, type Viewer } from "../../lib/view/server.js";
import { browserTestsRun, launch } from "./browser.js";
import { fixtureOn, removeFixtures, viewerEngines, type Engine, type Fixture } from "./fixture.js";
import { createHash, mediaCall, mediaRow, PDF_BYTES, shapePng, wavBytes } from "../store/media-fixture.js";

/** The page's globals, in the functions run in the browser (the project compiles without the DOM library). */
declare const document: any;

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
/** A PNG's width, read from its IHDR chunk here (not by the code under test). */
const pngWidth = (bytes: Buffer) => bytes.readUInt32BE(16);
const withBrowser = browserTestsRun();

for (const engine of viewerEngines() as Engine[]) describe(`media in the viewer (${engine})`, () => {
  let fixture: Fixture;
  let stop: () => Promise<void>;
  let viewer: Viewer;
  let runId = "";
  let browser: Browser | undefined;
  let closeBrowser: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const extend = (lab: LabStore) => {
      runId = lab.startRun({ kind: "evaluation", name: "shapes" });
      lab.recordExample(runId, mediaRow(0, 1), [mediaCall()]);
      lab.recordExample(runId, mediaRow(1, 9));
      lab.finishRun(runId, { status: "completed", score: 1, summary: {} });
    };
    const built = await fixtureOn(engine, extend);
    ({ fixture, stop } = built);
    viewer = await startViewer({ store: built.location, port: 0 });
    if (withBrowser) ({ browser, close: closeBrowser } = await launch());
  }, 120_000);

  afterAll(async () => {
    await closeBrowser?.();
    await viewer?.close();
    await stop?.();
    if (fixture !== undefined) closeStoreSync(fixture.path);
    removeFixtures();
  }, 60_000);

  it("serves each value with its type and nosniff; documents as attachments; 404 unknown, 400 malformed", async () => {
    const png = await fetch(`${viewer.url}media/${sha(shapePng(1))}`);
    expect(png.status).toBe(200);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(png.headers.get("x-content-type-options")).toBe("nosniff");
    expect(png.headers.get("content-disposition")).toBe("inline");
    expect(Buffer.from(await png.arrayBuffer()).equals(shapePng(1))).toBe(true);
    const wav = await fetch(`${viewer.url}media/${sha(wavBytes())}`);
    expect([wav.status, wav.headers.get("content-type")]).toEqual([200, "audio/wav"]);
    expect(Buffer.from(await wav.arrayBuffer()).equals(wavBytes())).toBe(true);
    const pdf = await fetch(`${viewer.url}media/${sha(PDF_BYTES)}`);
    expect([pdf.status, pdf.headers.get("content-type"), pdf.headers.get("x-content-type-options")]).toEqual([200, "application/pdf", "nosniff"]);
    expect(pdf.headers.get("content-disposition")).toMatch(/^attachment; filename="[0-9a-f]{16}\.pdf"$/);
    expect(Buffer.from(await pdf.arrayBuffer()).equals(PDF_BYTES)).toBe(true);
    const unknown = await fetch(`${viewer.url}media/${"ab".repeat(32)}`);
    expect([unknown.status, await unknown.text()]).toEqual([404, `The store holds no media value with sha256 ${"ab".repeat(32)}\n`]);
    for (const bad of ["xyz", sha(PDF_BYTES).toUpperCase(), `${sha(PDF_BYTES)}0`, `${sha(PDF_BYTES)}/more`]) {
      const answer = await fetch(`${viewer.url}media/${bad}`);
      expect(answer.status).toBe(400);
      expect(await answer.text()).toContain("A media address is /media/<sha256>");
    }
  });

  it("shows media on the example's page under a CSP allowing images and audio from the viewer only", async () => {
    const answer = await fetch(`${viewer.url}runs/${runId}/rows/0`);
    const csp = answer.headers.get("content-security-policy")!;
    expect(csp).toContain("img-src 'self';");
    expect(csp).toContain("media-src 'self';");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("data:");
    const page = await answer.text();
    expect(page).toContain(`<img src="/media/${sha(shapePng(1))}"`);
    expect(page).toContain(`<audio controls preload="metadata"><source src="/media/${sha(wavBytes())}" type="audio/wav"></audio>`);
    expect(page).toMatch(new RegExp(`<a href="/media/${sha(PDF_BYTES)}" download="[0-9a-f]{16}\\.pdf">download the document</a>`));
    // The call's data URL (in its text), its attached Image and its provider part are each shown as the picture.
    for (const n of [4, 5, 6]) expect(page).toContain(`<img src="/media/${sha(shapePng(n))}"`);
    expect(page).not.toContain(shapePng(4).toString("base64").slice(0, 40));
  });

  (withBrowser ? it : it.skip)("decodes the images in Chromium and gives the clip a player of its type", async () => {
    const page: Page = await browser!.newPage();
    const failed: string[] = [];
    page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) failed.push(`${r.status()} ${r.url()}`); });
    await page.goto(`${viewer.url}runs/${runId}/rows/1`, { waitUntil: "load" });
    await page.waitForFunction(() => [...document.querySelectorAll("img")].every((i: any) => i.complete), { timeout: 30_000 });
    const images = await page.$$eval("#inputs img", (imgs) => imgs.map((i: any) => [i.getAttribute("src"), i.naturalWidth]));
    expect(images).toEqual([
      [`/media/${sha(shapePng(9))}`, pngWidth(shapePng(9))], [`/media/${sha(shapePng(2))}`, pngWidth(shapePng(2))], [`/media/${sha(shapePng(3))}`, pngWidth(shapePng(3))],
    ]);
    expect(await page.$$eval("#inputs audio source", (s) => s.map((e: any) => [e.getAttribute("type"), e.getAttribute("src")]))).toEqual([["audio/wav", `/media/${sha(wavBytes())}`]]);
    // The player read the clip: 800 samples at 8 kHz.
    await page.waitForFunction(() => document.querySelector("#inputs audio").readyState >= 1, { timeout: 30_000 });
    expect(await page.$eval("#inputs audio", (a: any) => a.duration)).toBeCloseTo(0.1, 2);
    expect(await page.$eval("#inputs [data-kind=document] a", (a: any) => a.hasAttribute("download"))).toBe(true);
    // The live page's own rendering (rows added without a reload) makes the same image.
    await page.goto(`${viewer.url}runs/${runId}`, { waitUntil: "load" });
    await page.waitForFunction(() => [...document.querySelectorAll("img")].every((i: any) => i.complete), { timeout: 30_000 });
    expect(await page.$$eval("img", (imgs) => imgs.filter((i: any) => i.naturalWidth > 0).length)).toBeGreaterThanOrEqual(6);
    const live = await page.evaluate((ref) => {
      const node = (globalThis as any).typelmFields(ref);
      document.body.appendChild(node);
      return [node.querySelector("img").getAttribute("src"), node.getAttribute("data-kind")];
    }, { $media: sha(shapePng(9)), kind: "image", mediaType: "image/png", size: shapePng(9).length });
    expect(live).toEqual([`/media/${sha(shapePng(9))}`, "image"]);
    expect(failed).toEqual([]);
    await page.close();
  }, 90_000);
});
