// `typelm view`: a local web server over one lab store, read-only. Pages are rendered on the server
// (routes.ts, with pages.ts and pages-more.ts) from the store's read-only connection (a `ViewSource`:
// queries.ts for a file, pg-source.ts for a team's lab on PostgreSQL); the same data is JSON under /api/.
// Bootstrap intervals and comparisons (`f1_score`'s included) are computed on a worker thread
// (intervals.ts). This file is the HTTP side: listening, the Host check, the headers (CSP) and sending.
// Loaded only by the command line (a dynamic import), never by `import "typelm"`.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { ValidationError } from "../errors.js";
import { html, page } from "./html.js";
import { NotFound, Routes } from "./routes.js";
import { serveMedia } from "./media.js";
import { QUERY_TIMEOUT_MS, QueryTimeout, type ViewSource } from "./data/source.js";
import { isPostgresUrl } from "../store/pg.js";
import { npmLaunchers, whenEnded } from "../launcher.js";
import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import type { Lab, PostgresUrl } from "../store/lab-store.js";
import { postReview, type Answer, type ReviewSession } from "./review/post.js";

/** What `startViewer` takes: the store (a file, or a postgres:// URL), and where to listen (default 127.0.0.1:4173). */
export interface ViewerOptions {
  store: string;
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  /**
   * Runs with more rows than this get a bootstrap interval after their page is sent (the page fills
   * it in when ready); default 20,000.
   */
  deferIntervalsAbove?: number;
  /**
   * Milliseconds one slow query (a filter over every row of a run) may take before it is stopped and
   * the request answered 503 with a sentence; default 20,000.
   */
  queryTimeoutMs?: number;
  /**
   * Review mode (`typelm view --review`): the review queue at /review writes reviews through
   * `POST /api/reviews`, which needs the session token (`Viewer.token`). Without it nothing can be written.
   */
  review?: boolean;
  /** Who the reviews are by (default: the account that started the viewer). */
  reviewer?: string;
}

/** A running viewer: its address, and `close()` to stop it. */
export interface Viewer {
  url: string;
  store: string;
  /** Review mode: the session's token, and the queue's address carrying it (`/review#token=…`). */
  token?: string;
  reviewUrl?: string;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 4173;
const DEFER_INTERVALS_ABOVE = 20_000;

/** Starts the viewer; resolves once it listens. */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const store = await openSource(options.store, options.queryTimeoutMs ?? QUERY_TIMEOUT_MS);
  const host = options.host ?? "127.0.0.1";
  const routes = new Routes(store, options.deferIntervalsAbove ?? DEFER_INTERVALS_ABOVE, options.review === true);
  const allowed = { test: allowedHosts(host), text: hostsText(host) };
  const session = options.review === true ? await reviewSession(options.store, options.reviewer) : undefined;
  const server = createServer((req, res) => {
    // handle() answers its own errors; this is for a failure to send (the connection went away).
    handle(routes, allowed, req, res, session).catch(() => res.destroy());
  });
  try {
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(options.port ?? DEFAULT_PORT, host, () => { server.off("error", fail); done(); });
    });
  } catch (error) {
    await routes.close();
    await session?.close();
    const code = (error as { code?: unknown }).code;
    if (code === "EADDRINUSE") throw new ValidationError(`port ${options.port ?? DEFAULT_PORT} on ${host} is in use: give another with --port N (--port 0 picks a free one)`, { field: "port" });
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new ValidationError(`cannot listen on host ${JSON.stringify(host)}: give an address of this machine with --host (default 127.0.0.1)`, { field: "host" });
    throw error;
  }
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}/`;
  return {
    url,
    store: store.path,
    ...(session === undefined ? {} : { token: session.token, reviewUrl: `${url}review#token=${session.token}` }),
    close: () => closeServer(server).finally(() => routes.close()).finally(() => session?.close()),
  };
}

/** A review session: a new random token, the reviewer's name, and the lab opened for writing at the first review. */
async function reviewSession(store: string, reviewer: string | undefined): Promise<ReviewSession & { close(): Promise<void> }> {
  let lab: Promise<Lab> | undefined;
  const open = async (): Promise<Lab> => {
    const { LabStore } = await import("../store/lab-store.js");
    return isPostgresUrl(store) ? LabStore.open(store as PostgresUrl) : LabStore.open(store);
  };
  return {
    token: randomBytes(24).toString("base64url"),
    reviewer: reviewer ?? accountName(),
    lab: () => (lab ??= open()),
    close: async () => {
      const opened = await lab?.catch(() => undefined);
      await opened?.close();
    },
  };
}

function accountName(): string {
  try {
    return userInfo().username || "reviewer";
  } catch {
    return "reviewer";
  }
}

/** The store's reads: the file at a path, or a team's lab at a postgres:// URL (loads `pg`). */
async function openSource(store: string, timeoutMs: number): Promise<ViewSource> {
  if (isPostgresUrl(store)) {
    const { PostgresViewSource } = await import("./data/pg-source.js");
    return PostgresViewSource.open(store, { timeoutMs });
  }
  const { SqliteViewSource } = await import("./data/queries.js");
  const source = new SqliteViewSource(store, { timeoutMs });
  // The query thread starts with the viewer, so that the first slow read (a matrix's line-up) does not wait for it.
  source.startThread();
  return source;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}

/** Whether `host` (what `--host` gave) is reachable only from this machine: localhost, 127.x.x.x, ::1, ::ffff:127.x.x.x. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(h);
}

/** Whether `host` is a wildcard address (every interface of the machine). */
function isWildcard(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1");
  return h === "0.0.0.0" || h === "::" || h === "::0" || h === "0:0:0:0:0:0:0:0";
}

/**
 * The names a request's Host may give (port aside), whatever the viewer listens on: the loopback
 * names (localhost, 127.x.x.x, [::1]); the address or name it was bound to (the printed address); and, bound to a wildcard
 * address (0.0.0.0, ::), this machine's own interface addresses and host name as they were when it
 * started. Any other name is refused, so a web page cannot reach the viewer through a DNS name of its
 * own that points at this machine (DNS rebinding).
 */
export function allowedHosts(host: string): (hostHeader: string) => boolean {
  const names = new Set<string>(["localhost", "::1"]);
  const bound = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  names.add(bound);
  if (isWildcard(bound)) {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase().replace(/%.*$/, ""));
    const me = hostname().toLowerCase();
    if (me !== "") names.add(me);
  }
  return (hostHeader) => {
    const h = hostHeader.toLowerCase();
    const m = /^\[([0-9a-f:.]+)\](?::\d+)?$/.exec(h) ?? /^([^:[\]]+)(?::\d+)?$/.exec(h);
    if (m === null) return false;
    const name = m[1]!.replace(/\.$/, "");
    return names.has(name) || /^127\.\d+\.\d+\.\d+$/.test(name);
  };
}

/** The Host values the viewer answers to, as its refusal names them. */
function hostsText(host: string): string {
  return isWildcard(host) ? `127.0.0.1, localhost, [::1], ${host.includes(":") ? `[${host}]` : host}, this machine's addresses and its host name`
    : isLoopback(host) && !host.startsWith("::ffff:") ? "127.0.0.1, localhost and [::1]"
      : `127.0.0.1, localhost, [::1] and ${host.includes(":") ? `[${host}]` : host}`;
}

/**
 * Answers one request: GET and HEAD only; only to a Host the viewer answers to (`allowedHosts`); a
 * page, or JSON under /api/; a page that is not there 404, bad input 400, a query past its time 503,
 * anything else 500; nothing for a client that has gone.
 */
async function handle(
  routes: Routes, allowed: { test: (hostHeader: string) => boolean; text: string }, req: IncomingMessage, res: ServerResponse, session?: ReviewSession,
): Promise<void> {
  const reviewPost = req.method === "POST" && (req.url ?? "").split("?")[0] === "/api/reviews";
  if (req.method !== "GET" && req.method !== "HEAD" && !reviewPost) {
    const only = session === undefined ? "GET only" : "GET only, and POST to /api/reviews";
    send(res, 405, "text/plain; charset=utf-8", `The viewer is read-only: ${only}.\n`, { allow: "GET, HEAD" });
    return;
  }
  // A page on another site must not reach the viewer through a name that resolves to 127.0.0.1.
  const hostHeader = req.headers.host ?? "";
  if (!allowed.test(hostHeader)) {
    send(res, 403, "text/plain; charset=utf-8", `The viewer answers only to ${allowed.text}.\n`);
    return;
  }
  if (reviewPost) {
    let answer: Answer;
    try {
      answer = await postReview(req, session);
    } catch (error) {
      answer = { status: 500, body: { error: error instanceof Error ? error.message : String(error) } };
    }
    send(res, answer.status, "application/json; charset=utf-8", JSON.stringify(answer.body), answer.status === 405 ? { allow: "GET, HEAD" } : {});
    return;
  }
  const url = new URL(req.url ?? "/", "http://viewer");
  // The browser's icon request: a small inline SVG (no 404 logged for every page).
  if (url.pathname === "/favicon.ico") {
    send(res, 200, FAVICON_TYPE, FAVICON, { "cache-control": "max-age=86400" });
    return;
  }
  let parts: string[];
  try {
    parts = url.pathname.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p));
  } catch {
    parts = ["\u0000"];
  }
  // A stored image, clip or document (content-addressed, read-only): its bytes, not a page.
  if (parts[0] === "media") {
    await serveMedia(routes.store, parts, res);
    return;
  }
  const api = parts[0] === "api";
  // A client that goes away before its answer (a page left, a filter changed) stops its slow reads.
  const gone = new AbortController();
  res.once("close", () => { if (!res.writableFinished) gone.abort(new Error("the request was abandoned")); });
  try {
    const out = api ? await routes.api(parts.slice(1), url.searchParams, gone.signal) : await routes.page(parts, url.searchParams, gone.signal);
    if (typeof out === "string") {
      send(res, 200, "text/html; charset=utf-8", out);
    } else {
      send(res, 200, "application/json; charset=utf-8", JSON.stringify(out));
    }
  } catch (error) {
    if (gone.signal.aborted) return;
    const status = error instanceof NotFound ? 404 : error instanceof ValidationError ? 400 : error instanceof QueryTimeout ? 503 : 500;
    const message = error instanceof Error ? error.message : String(error);
    if (api) send(res, status, "application/json; charset=utf-8", JSON.stringify({ error: message }));
    else send(res, status, "text/html; charset=utf-8", page(status === 404 ? "Not found" : "Error", routes.store.path, html`<h1>${status === 404 ? "Not found" : "Error"}</h1><p id="error">${message}</p><p><a href="/">runs</a></p>`));
  }
}

/** The viewer's icon at /favicon.ico: an SVG (a bar chart on the header's blue), served as `FAVICON_TYPE`. */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#23395d"/><rect x="3" y="8" width="2" height="5" fill="#fff"/><rect x="7" y="5" width="2" height="8" fill="#fff"/><rect x="11" y="3" width="2" height="10" fill="#fff"/></svg>`;
/** The content type of `FAVICON`. */
export const FAVICON_TYPE = "image/svg+xml";

function send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
  const nonce = /<script nonce="([^"]+)"/.exec(type.startsWith("text/html") ? body : "")?.[1];
  res.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    // Only the page's own inline script runs; stored text can never become a script or a style; images
    // and audio come only from the viewer itself (/media/<sha256>).
    "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; media-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'${nonce === undefined ? "" : `; script-src 'nonce-${nonce}'`}`,
    ...extra,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

/**
 * `typelm view`: starts the viewer, prints its address, and serves until interrupted (Ctrl-C, SIGTERM,
 * SIGHUP) or, started by npx or npm, until npm and the shell it ran have ended.
 */
export async function serveCommand(options: ViewerOptions, io: { stdout: (text: string) => void; stderr: (text: string) => void }): Promise<number> {
  const viewer = await startViewer(options);
  // Listening for Ctrl-C before the address is announced: whoever reads it may stop the server at once.
  // Started by npx or npm run (through a shell npm signals alone), it also stops when they have ended.
  const stopped = new Promise<void>((done) => {
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    const stop = () => { unwatch(); for (const s of signals) process.off(s, stop); done(); };
    for (const s of signals) process.on(s, stop);
    const unwatch = whenEnded(npmLaunchers(), stop);
  });
  io.stderr(viewer.token === undefined ? `Serving ${viewer.store} read-only; Ctrl-C stops.\n`
    : `Serving ${viewer.store} in review mode: the review queue writes reviews with the session token in its address; Ctrl-C stops.\n`);
  const host = options.host ?? "127.0.0.1";
  if (!isLoopback(host)) {
    io.stderr(`Warning: listening on ${host}, which other machines may reach: the viewer has no login, so whoever reaches it reads every run in the store. It answers only to ${hostsText(host)}.\n`);
  }
  io.stdout(`typelm view: ${viewer.url}\n`);
  if (viewer.reviewUrl !== undefined) io.stdout(`review queue: ${viewer.reviewUrl}\n`);
  await stopped;
  await viewer.close();
  return 0;
}
