import type { IncomingMessage, ServerResponse } from "node:http";
import type { Module } from "typelm";

/** An HTTP handler that runs `program` on the request's inputs and streams it as server-sent events. */
export function sseHandler(program: Module, toInputs: (url: URL) => Record<string, unknown>) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const controller = new AbortController();
    // The browser went away (tab closed, EventSource.close()): abort the model request too.
    res.on("close", () => controller.abort());
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

    const stream = program.stream(toInputs(new URL(req.url ?? "/", "http://localhost")), { signal: controller.signal });
    try {
      for await (const e of stream) {
        if (e.type === "partial") send("partial", { path: e.path, partial: e.partial });
        else if (e.type === "field") send("field", { path: e.path, name: e.name, value: e.value });
        else send("step", { path: e.path, step: e.step });
      }
      send("done", await stream.result);
    } catch (error) {
      const { name, message } = error as Error;
      if (!controller.signal.aborted) send("error", { name, message });
    }
    res.end();
  };
}
