#!/usr/bin/env node
// Checks the links between the guides: every relative Markdown link in README.md and docs/*.md
// (docs/api, the generated reference, is not read) must name a file that exists and, when it has a
// `#anchor`, a heading of that file whose GitHub anchor is that anchor. Every guide in docs/*.md
// must also be linked from README.md. Prints each broken link as `file:line → target` and exits 1.
//
//   node scripts/check-links.mjs            (from the repository root, or from anywhere)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const docsDir = join(root, "docs");
const guides = existsSync(docsDir)
  ? readdirSync(docsDir).filter((f) => f.endsWith(".md")).sort().map((f) => join(docsDir, f))
  : [];
const files = [join(root, "README.md"), ...guides];

/** Lines of a Markdown file with fenced code blocks blanked out (so `# comment` in code is no heading). */
function proseLines(text) {
  const lines = text.split(/\r?\n/);
  let fence = null; // { char, length } of the open fence
  return lines.map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null) {
      if (open) {
        fence = { char: open[1][0], length: open[1].length };
        return "";
      }
      return line;
    }
    const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (close && close[1][0] === fence.char && close[1].length >= fence.length) fence = null;
    return "";
  });
}

/** Removes inline code spans (`x`, ``x``), so code that looks like a link or an anchor is ignored. */
function withoutCode(line) {
  return line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, "");
}

/** GitHub's anchor for a heading: rendered text, lower-cased, punctuation dropped, spaces → hyphens. */
function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/<[^>]+>/g, "") // inline HTML tags
    .replace(/[*~]/g, "") // emphasis marks (underscores stay: GitHub keeps them)
    .replace(/`/g, "");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

const anchorCache = new Map();
/** Every anchor a Markdown file defines: its headings' slugs (with -1, -2 … for repeats) and HTML ids. */
function anchorsOf(file) {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const counts = new Map();
  for (const line of proseLines(readFileSync(file, "utf8"))) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = counts.get(base) ?? 0;
      counts.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

const broken = [];
/** Guides README.md links to (absolute paths). */
const linkedFromReadme = new Set();

for (const file of files) {
  const shown = relative(root, file);
  proseLines(readFileSync(file, "utf8")).forEach((raw, i) => {
    const line = withoutCode(raw);
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // URLs, mailto:
      const hash = target.indexOf("#");
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const destination = pathPart === "" ? file : resolve(dirname(file), pathPart);
      const where = `${shown}:${i + 1}`;
      if (!existsSync(destination)) {
        broken.push(`${where} → ${target} (no such file)`);
        continue;
      }
      if (file === files[0]) linkedFromReadme.add(destination);
      if (anchor !== undefined && anchor !== "") {
        if (!destination.endsWith(".md") || statSync(destination).isDirectory()) continue; // only Markdown headings are known
        if (!anchorsOf(destination).has(anchor)) broken.push(`${where} → ${target} (no heading with anchor #${anchor} in ${relative(root, destination)})`);
      }
    }
  });
}

for (const guide of guides) {
  if (!linkedFromReadme.has(guide)) broken.push(`README.md → ${relative(root, guide)} (a guide the README does not link to)`);
}

if (broken.length > 0) {
  console.error(`Broken links between the guides (${broken.length}):`);
  for (const b of broken) console.error(`  ${b}`);
  process.exit(1);
}
console.log(`Links between the guides: ${files.length} files checked, every relative link resolves, every guide is linked from README.md.`);
