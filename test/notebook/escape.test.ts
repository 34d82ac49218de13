/**
 * The escaper behind every value in the notebook displays' and the viewer's HTML, in attribute
 * values as well as in text: a value can end neither its attribute (either quote) nor its element.
 */
import { describe, expect, it } from "@jest/globals";
import { escapeHtml, htmlText } from "../../lib/notebook/html.js";
import { html } from "../../lib/view/html.js";

const HOSTILE = [
  `" onmouseover=alert(1) x="`,
  `' onfocus='alert(2)' autofocus x='`,
  `"><img src=x onerror=alert(3)>`,
  `&quot; onclick=alert(4) &#34;`,
  `</textarea><script>alert(5)</script>`,
];

/**
 * The attributes of one start tag as an HTML tokenizer reads them (the spec's attribute states,
 * simplified): a name up to "=", space or ">", a quoted value up to its matching quote, an unquoted
 * one up to space or ">"; entities of the escaper decoded. Stops at the tag's end.
 */
function attributes(tag: string): [string, string][] {
  const out: [string, string][] = [];
  let i = tag.indexOf(" ");
  const decode = (raw: string) => raw.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e]!);
  while (i < tag.length) {
    while (/\s/.test(tag[i]!)) i++;
    if (tag[i] === ">" || tag[i] === "/") break;
    let name = "";
    while (i < tag.length && !/[\s=>]/.test(tag[i]!)) name += tag[i++];
    let value = "";
    if (tag[i] === "=") {
      i++;
      const quote = tag[i];
      if (quote === '"' || quote === "'") {
        const end = tag.indexOf(quote, i + 1);
        value = tag.slice(i + 1, end);
        i = end + 1;
      } else {
        while (i < tag.length && !/[\s>]/.test(tag[i]!)) value += tag[i++];
      }
    }
    out.push([name, decode(value)]);
  }
  return out;
}

describe("escapeHtml in attribute values", () => {
  it("escapes & < > \" and ' (exactly those), so a value cannot close a double- or single-quoted attribute", () => {
    expect(escapeHtml(`a&b<c>d"e'f`)).toBe("a&amp;b&lt;c&gt;d&quot;e&#39;f");
    for (const value of HOSTILE) {
      const escaped = escapeHtml(value);
      expect(escaped).not.toMatch(/["'<>]/);
      const tag = `<input value="${escaped}" title='${escaped}' name="last">`;
      // Each attribute reads back the whole value, and nothing in it became an attribute.
      expect(attributes(tag)).toEqual([["value", value], ["title", value], ["name", "last"]]);
    }
  });

  it("the viewer's html template and htmlText escape the same way", () => {
    for (const value of HOSTILE) {
      const tag = html`<input name="text" value="${value}" title='${value}'>`.text;
      expect(attributes(tag)).toEqual([["name", "text"], ["value", value], ["title", value]]);
      expect(htmlText(value)).toBe(escapeHtml(value));
    }
  });
});
