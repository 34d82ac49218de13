/**
 * The Redis key layout of the memory store, with user ids, tags and record ids encoded so that
 * any string maps to keys of its own.
 *
 * A part is percent-encoded: every character outside `A-Z a-z 0-9 . _ ~ -` becomes `%XX` per UTF-8
 * byte (a lone UTF-16 surrogate, which has no UTF-8 form, becomes `%uXXXX`). An encoded part never
 * holds ":" (the separator), so `user:<u>:tag:<t>` cannot be read as another user's key; it holds no
 * `*`, `?` or `[` (SCAN/KEYS patterns) and no `{` or `}` (Cluster hash tags). Plain ids such as "u1"
 * or a UUID are left as they are.
 */

const SAFE = /^[A-Za-z0-9._~-]*$/;
const SAFE_CHAR = /[A-Za-z0-9._~-]/;
const utf8 = new TextEncoder();

function hex(n: number, width: number): string {
  return n.toString(16).toUpperCase().padStart(width, "0");
}

/** One key part, encoded one-to-one (distinct strings give distinct parts). */
export function encodeKeyPart(part: string): string {
  if (SAFE.test(part)) return part;
  let out = "";
  // for..of walks code points; a lone surrogate comes through as a single unit.
  for (const ch of part) {
    const code = ch.codePointAt(0)!;
    if (code < 0x80) out += SAFE_CHAR.test(ch) ? ch : `%${hex(code, 2)}`;
    else if (code >= 0xd800 && code <= 0xdfff) out += `%u${hex(code, 4)}`;
    else for (const byte of utf8.encode(ch)) out += `%${hex(byte, 2)}`;
  }
  return out;
}

/** The keys of one namespace (`ns`, default "typelm:memory"); see redis-store.ts for what each holds. */
export class RedisKeys {
  constructor(private readonly namespace: string) {}

  /** ns:seq — the creation sequence. */
  get sequence(): string {
    return `${this.namespace}:seq`;
  }
  /** ns:mem:<id> */
  record(id: string): string {
    return `${this.namespace}:mem:${encodeKeyPart(id)}`;
  }
  /** ns:user:<userId> */
  user(userId: string): string {
    return `${this.namespace}:user:${encodeKeyPart(userId)}`;
  }
  /** ns:user:<userId>:tag:<tag> */
  tag(userId: string, tag: string): string {
    return `${this.user(userId)}:tag:${encodeKeyPart(tag)}`;
  }
  /** ns:user:<userId>:by-time */
  time(userId: string): string {
    return `${this.user(userId)}:by-time`;
  }
}
