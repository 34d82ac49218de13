// The start of a JSON text cut short (a long value in a page of rows keeps its first 4,096 characters)
// read as far as it goes: an open string is closed where it was cut, a member cut before its value is
// left out, and the open arrays and objects are closed, so the start can be shown as fields too.
// Anything that still does not parse gives undefined (the start is then shown as the text it is).

/** The value the JSON text `start` begins, closed where it was cut; undefined when it cannot be read. */
export function partialJson(start: string): unknown {
  const stack: ("}" | "]")[] = [];
  let inString = false, escaped = false, expectKey = false, stringIsValue = false;
  // The last place a whole value ended (the text up to it, and the containers then open).
  let safe = 0;
  let safeStack: ("}" | "]")[] = [];
  const mark = (at: number) => { safe = at; safeStack = stack.slice(); };
  for (let i = 0; i < start.length; i++) {
    const c = start[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') { inString = false; if (stringIsValue) mark(i + 1); }
      continue;
    }
    if (c === '"') { inString = true; stringIsValue = !expectKey; }
    else if (c === "{") { stack.push("}"); expectKey = true; mark(i + 1); }
    else if (c === "[") { stack.push("]"); expectKey = false; mark(i + 1); }
    else if (c === "}" || c === "]") { stack.pop(); expectKey = false; mark(i + 1); }
    else if (c === ":") expectKey = false;
    else if (c === ",") { mark(i); expectKey = stack[stack.length - 1] === "}"; }
  }
  const close = (stackAt: ("}" | "]")[]) => stackAt.slice().reverse().join("");
  const attempts: string[] = [];
  // A string value cut in its middle: kept, closed where it was cut (a cut escape left out).
  if (inString && stringIsValue) attempts.push(`${start.replace(/\\(u[0-9a-fA-F]{0,3})?$/, "")}"${close(stack)}`);
  attempts.push(`${start.slice(0, safe).replace(/,\s*$/, "")}${close(safeStack)}`);
  for (const text of attempts) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // The next, shorter reading.
    }
  }
  return undefined;
}
