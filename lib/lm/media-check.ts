/**
 * Checks a request's media against what the provider takes, before any call (and before the
 * response cache or a batch sees it): the kinds it takes (a kind it cannot take is a
 * `ConfigurationError`), and for each value (a `ValidationError` naming its field) bytes of the
 * field's kind, a format the provider takes, a URL only where the provider fetches URLs itself, and
 * its documented size limits. Loaded at the first request that carries media.
 *
 * The figures, from each provider's documentation (checked 2026-11):
 * - OpenAI chat completions, "Images and vision": PNG, JPEG, WebP, non-animated GIF; up to 20 MB
 *   per image, 50 MB of image bytes and 500 images per request; an image may be a URL.
 *   "Audio": `input_audio` takes base64 WAV or MP3 only (no URL); no per-clip size is documented.
 *   "File inputs": chat completions takes PDF only, as base64 `file_data` (no file URL); up to
 *   32 MB of files per request.
 * - Anthropic Messages, "Vision": JPEG, PNG, GIF, WebP; an image's base64 text at most 5 MB
 *   (the API's error: "image exceeds 5 MB maximum: … bytes > 5242880 bytes"); 100 images per
 *   request; "PDF support": PDF documents; 32 MB per request in all. Images and documents may be
 *   `https:` URLs. No audio input.
 * - Ollama `/api/chat`: `images`, base64 only (no URL), PNG or JPEG; no documents, no audio; no
 *   size limit documented (none is checked).
 * A value given as an `http(s):` URL is not fetched here, so its type and size are left to the provider.
 */
import { ConfigurationError, ValidationError } from "../errors.js";
import { mediaProblem, type MediaKind } from "../media/media.js";
import type { ChatMessage, MediaAttachment } from "../prompt/formats.js";

const MB = 1024 * 1024;

interface KindRule {
  /** Media types taken. */
  types: readonly string[];
  /** Whether an `http(s):` URL may be sent as is. */
  url: boolean;
  /** Largest value, in bytes (or in base64 characters when `base64` is set). */
  max?: number;
  base64?: boolean;
}

interface ProviderMedia {
  title: string;
  kinds: Partial<Record<MediaKind, KindRule>>;
  /** Why a kind is missing, and what to do instead. */
  missing: string;
  /** Largest total per request, in bytes of the values, for one kind or for all (`all`, base64 characters). */
  totals: Partial<Record<MediaKind | "all", number>>;
  maxImages?: number;
}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** What each provider takes; a provider not listed (an OpenAI-compatible server) is held to OpenAI's rules. */
export const PROVIDER_MEDIA: Readonly<Record<string, ProviderMedia>> = {
  openai: {
    title: "OpenAI's chat completions",
    kinds: {
      image: { types: IMAGE_TYPES, url: true, max: 20 * MB },
      audio: { types: ["audio/wav", "audio/mpeg"], url: false },
      document: { types: ["application/pdf"], url: false },
    },
    missing: "",
    totals: { image: 50 * MB, document: 32 * MB },
    maxImages: 500,
  },
  anthropic: {
    title: "Anthropic's Messages API",
    kinds: {
      image: { types: IMAGE_TYPES, url: true, max: 5 * MB, base64: true },
      document: { types: ["application/pdf"], url: true },
    },
    missing: "it has no audio input; use an OpenAI audio model (such as openai/gpt-4o-audio-preview), or transcribe the clip to text first",
    totals: { all: 32 * MB },
    maxImages: 100,
  },
  ollama: {
    title: "Ollama's chat API",
    kinds: { image: { types: ["image/png", "image/jpeg"], url: false } },
    missing: "it takes images only; send a PDF's pages as images, or use an openai/ or anthropic/ model",
    totals: {},
  },
};

const megabytes = (n: number): string => `${(n / MB).toFixed(n % MB === 0 ? 0 : 1)} MB`;
const WORD: Record<MediaKind, string> = { image: "image", audio: "audio clip", document: "document" };

/** The bytes a value sends: its own, or a `data:` URL's payload; undefined for an `http(s):` URL. */
function payload(value: MediaAttachment["value"]): { mediaType: string; bytes: number; base64: number } | undefined {
  if (value.bytes !== undefined) return { mediaType: value.mediaType, bytes: value.size, base64: 4 * Math.ceil(value.size / 3) };
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/is.exec(value.url ?? "");
  if (match === null) return undefined;
  const base64 = match[2]!.replace(/\s+/g, "").length;
  return { mediaType: match[1] || value.mediaType, bytes: Math.floor((base64 * 3) / 4), base64 };
}

function checkValue(rules: ProviderMedia, rule: KindRule, provider: string, { name, value }: MediaAttachment): { bytes: number; base64: number } {
  const fail = (why: string): never => {
    throw new ValidationError(`Input field "${name}": ${why}`, { field: name });
  };
  const problem = mediaProblem(value.kind, value);
  if (problem !== undefined) fail(problem);
  const sent = payload(value);
  if (sent === undefined) {
    if (!rule.url) fail(`${rules.title} does not fetch ${WORD[value.kind]}s from a URL (${value.url}); read the bytes instead (fromFile or fromBytes)`);
    return { bytes: 0, base64: 0 };
  }
  if (!rule.types.includes(sent.mediaType)) fail(`the ${WORD[value.kind]} is ${sent.mediaType}; ${provider} takes ${rule.types.join(", ")}`);
  const size = rule.base64 ? sent.base64 : sent.bytes;
  if (rule.max !== undefined && size > rule.max) {
    const what = rule.base64 ? `its base64 text is ${size.toLocaleString("en-US")} characters` : `it is ${megabytes(size)}`;
    fail(`the ${WORD[value.kind]} is too large for ${provider}: ${what}, over the ${megabytes(rule.max)}${rule.base64 ? " of base64 text" : ""} ${provider} takes per ${WORD[value.kind]}`);
  }
  return sent;
}

/**
 * Throws before any call when `messages` carry media `provider` cannot take: a `ConfigurationError`
 * for a kind it has no input for, a `ValidationError` naming the field for a value it would refuse.
 */
export function checkRequestMedia(provider: string, model: string, messages: readonly ChatMessage[]): void {
  const rules = PROVIDER_MEDIA[provider] ?? PROVIDER_MEDIA["openai"]!;
  const totals: Record<MediaKind | "all", number> = { image: 0, audio: 0, document: 0, all: 0 };
  let images = 0;
  let lastImage = "";
  for (const attachment of messages.flatMap((m) => m.media ?? [])) {
    const kind = attachment.value.kind;
    const rule = rules.kinds[kind];
    if (rule === undefined) {
      throw new ConfigurationError(`${provider} model "${model}" cannot take ${WORD[kind]}s (input field "${attachment.name}"): ${rules.title} ${rules.missing}`);
    }
    const sent = checkValue(rules, rule, provider, attachment);
    totals[kind] += sent.bytes;
    totals.all += sent.base64;
    if (kind === "image") [images, lastImage] = [images + 1, attachment.name];
    const limit = rules.totals[kind];
    if (limit !== undefined && totals[kind] > limit) {
      throw new ValidationError(`Input field "${attachment.name}": the request's ${WORD[kind]}s come to ${megabytes(totals[kind])}, over the ${megabytes(limit)} ${provider} takes per request`, { field: attachment.name });
    }
    if (rules.totals.all !== undefined && totals.all > rules.totals.all) {
      throw new ValidationError(`Input field "${attachment.name}": the request's media come to ${megabytes(totals.all)} of base64 text, over the ${megabytes(rules.totals.all)} ${provider} takes per request`, { field: attachment.name });
    }
  }
  if (rules.maxImages !== undefined && images > rules.maxImages) {
    throw new ValidationError(`Input field "${lastImage}": the request holds ${images} images; ${provider} takes at most ${rules.maxImages} per request`, { field: lastImage });
  }
}
