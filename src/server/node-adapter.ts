import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/**
 * A fetch handler as a Node `(req, res)` handler: the request becomes a `Request` (its body streamed, not read ahead),
 * the `Response` is written as it streams, and a client that goes away cancels the response's body.
 */
export function nodeHandler(fetchHandler: (request: Request) => Promise<Response>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      let request: Request;
      try {
        request = requestOf(req);
      } catch (error) {
        // A Host or path no URL can be made of.
        res.writeHead(400, { "Content-Type": "application/json; charset=utf-8" });
        return void res.end(JSON.stringify({ error: { code: "INVALID_REQUEST", message: `the request's Host or path is not valid: ${(error as Error).message}` } }));
      }
      const response = await fetchHandler(request);
      const headers: Record<string, string[] | string> = {};
      response.headers.forEach((value, key) => {
        headers[key] = value;
      });
      res.writeHead(response.status, headers);
      if (!response.body || req.method === "HEAD") return void res.end();
      res.flushHeaders();
      const reader = response.body.getReader();
      res.on("close", () => void reader.cancel().catch(() => undefined));
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (done) break;
        if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
        if (res.destroyed) break;
      }
      res.end();
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { code: "INTERNAL", message: (error as Error)?.message ?? String(error) } }));
    });
  };
}

function requestOf(req: IncomingMessage): Request {
  const host = req.headers.host ?? "127.0.0.1";
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const controller = new AbortController();
  req.once("close", () => controller.abort());
  return new Request(`http://${host}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}
