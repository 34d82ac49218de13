/**
 * The response cache's key recipe and the checks of a `ResponseCache`'s location, loaded by the bundle
 * at the first request an LM makes with a cache or in a batch round (scripts/deferred-modules.mjs);
 * cache.ts keeps the `ResponseCache` class and `endpointId`, which every LM uses.
 */
import { builtin, nodeCrypto } from "../load-sync.js";
import { canonicalJson } from "../canonical-json.js";
import { shownUrl } from "../instrument/redact.js";
import { isPostgresUrl, storeKind } from "../store/pg-url.js";
import type { CacheKeyParts } from "./cache.js";

/**
 * The request as stored and hashed. Version-tagged so a change of key recipe never serves stale rows.
 * `rolloutId` is added only when set, so a request without one keeps the key (and stored text) it
 * always had and existing cache files still answer it.
 */
export function cacheRequestJson(parts: CacheKeyParts): string {
  return canonicalJson({
    v: 2,
    provider: parts.provider,
    endpoint: parts.endpoint,
    model: parts.model,
    // A message's media enter as each value's type and sha256 (never its base64 text); a message
    // without media keeps the key it always had.
    messages: parts.messages.map((m) => (m.media?.length
      ? { role: m.role, content: m.content, media: m.media.map((a) => ({ kind: a.value.kind, mediaType: a.value.mediaType, sha256: a.value.sha256 })) }
      : { role: m.role, content: m.content })),
    temperature: parts.temperature ?? null,
    maxTokens: parts.maxTokens ?? null,
    responseSchema: parts.responseSchema ?? null,
    ...(parts.rolloutId === undefined ? {} : { rolloutId: parts.rolloutId }),
    ...(parts.reasoning === undefined ? {} : { reasoning: parts.reasoning }),
  });
}

/** The key of a request: the sha256 of its `cacheRequestJson`, hex. */
export function cacheKey(requestJson: string): string {
  return nodeCrypto().createHash("sha256").update(requestJson).digest("hex");
}

let memoryStores = 0;

/** Where a `ResponseCache` keeps its replies, checked; see its constructor. */
export interface ResponseCacheSite {
  /** The file (or ":memory:"), or the database's URL without its credentials. */
  path: string;
  /** The file, or the database URL as configured (with its credentials). */
  location: string;
  /** Which in-flight calls the cache may join: same file, or (":memory:", private) only its own. */
  scope: string;
}

/** Checks a cache's `path` (another scheme or a keyword string is refused without being shown) and says where it keeps its replies. */
export function responseCacheSite(path: string): ResponseCacheSite {
  // Another scheme or a keyword string is refused without being shown (it may carry a password).
  if (path !== ":memory:") storeKind(path, "The response cache");
  // A database URL is shown (lm.cachePath) without its user and password.
  const shown = isPostgresUrl(path) ? shownUrl(path) : path;
  const scope = shown === ":memory:" ? `:memory:${++memoryStores}` : isPostgresUrl(path) ? path : builtin("node:path").resolve(shown);
  return { path: shown, location: path, scope };
}
