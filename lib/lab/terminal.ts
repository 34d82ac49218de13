/**
 * Text for a terminal line: control characters (ESC, CR, LF, tab, DEL, C1 controls) and Unicode
 * line/paragraph separators and bidi overrides are shown escaped (`\x1b`, `\n`, `\u202e`), so stored or
 * user-supplied text can neither run terminal sequences nor fake extra lines.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    switch (c) {
      case "\n": return "\\n";
      case "\r": return "\\r";
      case "\t": return "\\t";
      default: {
        const code = c.charCodeAt(0);
        return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
      }
    }
  });
}
