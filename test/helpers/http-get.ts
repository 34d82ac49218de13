import { get } from "node:http";

/**
 * GET `url` over a connection of its own (no keep-alive pool), as a fetch `Response`. For tests that
 * run a server in their own process and block that process between requests (the library computing
 * what a page should show): the server's keep-alive timer then fires late, after a pooled connection
 * was handed to the next request, and that request is reset (ECONNRESET) instead of answered.
 */
export function getFresh(url: string, options: { signal?: AbortSignal } = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, signal: options.signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => resolve(new Response(Buffer.concat(chunks), { status: response.statusCode ?? 0 })));
    });
    request.on("error", reject);
  });
}
