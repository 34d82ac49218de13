// The viewer's one write: `POST /api/reviews` (server.ts sends it here once the Host has been checked).
// In review mode only (405 otherwise); a request from another origin (its Origin, or a browser's
// Sec-Fetch-Site "cross-site") is refused 403, as is one without the session's token in
// `X-Typelm-Token` or with another; the body must be JSON (`content-type: application/json`, 415
// otherwise; a form or a plain-text post from another site's page cannot pass) of at most `MAX_BODY`
// bytes (413), and fit a review (400 with a sentence). The review is written to the lab as an
// annotation (lib/store/annotations) and answered 201 with it.
import type { IncomingMessage } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { ValidationError } from "../../errors.js";
import { addAnnotation, annotationProblem, type Annotation } from "../../store/annotations/annotations.js";
import type { Lab } from "../../store/lab-store.js";

/** Largest body taken, in bytes. */
export const MAX_BODY = 256 * 1024;

/** The header the session's token travels in. */
export const TOKEN_HEADER = "x-typelm-token";

/** What a review post needs: the session's token, who reviews, and the lab to write to (opened at the first write). */
export interface ReviewSession {
  token: string;
  reviewer: string;
  lab: () => Promise<Lab>;
}

/** An answer: the status and its JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

const refuse = (status: number, error: string): Answer => ({ status, body: { error } });

/** Whether `given` is the session's token (compared in constant time). */
function sameToken(given: string | string[] | undefined, token: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given), b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Answers `POST /api/reviews` (see the head of this file). `session` is undefined when the viewer was
 * started without --review; the request's Host has been checked by the server.
 */
export async function postReview(req: IncomingMessage, session: ReviewSession | undefined): Promise<Answer> {
  if (session === undefined) return refuse(405, "The viewer is read-only: start it with typelm view --review to write reviews.");
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host ?? ""}`) {
    return refuse(403, `A review is taken only from the viewer's own pages; this request came from ${origin}.`);
  }
  if (req.headers["sec-fetch-site"] === "cross-site") return refuse(403, "A review is taken only from the viewer's own pages; this request came from another site.");
  if (!sameToken(req.headers[TOKEN_HEADER], session.token)) {
    return refuse(403, `A review needs the session's token in the X-Typelm-Token header: the one in the address typelm view --review printed.`);
  }
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") return refuse(415, `A review is sent as JSON (content-type: application/json); received ${type === "" ? "no content type" : type}.`);
  let text: string;
  try {
    text = await readBody(req);
  } catch (error) {
    return refuse(413, (error as Error).message);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refuse(400, "The body is not valid JSON: send { runId, exampleId, verdict, expected?, note? }.");
  }
  const problem = annotationProblem(body);
  if (problem !== undefined) return refuse(400, `${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  const b = body as { runId: string; exampleId: string; verdict: Annotation["verdict"]; expected?: Record<string, unknown>; note?: string };
  try {
    const stored = await addAnnotation(await session.lab(), {
      runId: b.runId, exampleId: b.exampleId, verdict: b.verdict, reviewer: session.reviewer,
      ...(b.expected === undefined ? {} : { expected: b.expected }), ...(b.note === undefined ? {} : { note: b.note }),
    });
    return { status: 201, body: stored };
  } catch (error) {
    if (error instanceof ValidationError) return refuse(400, `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`);
    throw error;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is read and dropped, so that the answer still reaches the client.
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) fail(new Error(`The body is over ${MAX_BODY / 1024} KiB; a review is far smaller.`));
      else done(Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", fail);
  });
}
