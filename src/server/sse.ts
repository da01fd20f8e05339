import { SSE_HEADERS } from "./http-guard.js";
import type { RunLog } from "./run-log.js";

/** Comment lines keep an idle connection from being closed by proxies while a run waits on a slow step. */
const KEEP_ALIVE_MS = 15_000;

/**
 * A stream of lines written as they come, ended by the reader going away (`cancel`) or by the source ending. The
 * source gets an AbortSignal that aborts when the client leaves.
 */
export function streamResponse(source: (signal: AbortSignal) => AsyncIterable<string>, headers: Record<string, string> = SSE_HEADERS, status = 200): Response {
  const controller = new AbortController();
  const encoder = new TextEncoder();
  let iterator: AsyncIterator<string> | undefined;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      keepAlive = setInterval(() => {
        try {
          stream.enqueue(encoder.encode(": keep-alive\n\n"));
        } catch {
          clearInterval(keepAlive);
        }
      }, KEEP_ALIVE_MS);
      keepAlive.unref?.();
      iterator = source(controller.signal)[Symbol.asyncIterator]();
    },
    async pull(stream) {
      try {
        const next = await iterator!.next();
        if (next.done) {
          clearInterval(keepAlive);
          stream.close();
        } else stream.enqueue(encoder.encode(next.value));
      } catch (error) {
        clearInterval(keepAlive);
        stream.error(error);
      }
    },
    cancel() {
      clearInterval(keepAlive);
      controller.abort();
      void iterator?.return?.();
    },
  });
  return new Response(body, { status, headers });
}

/**
 * `GET /runs/:runId/events`: the run's AgentEvents as Server-Sent Events, each with its id (its place in the run). A
 * client that reconnects with `Last-Event-ID: N` gets the events after N, none lost and none twice; without it, the
 * run from its start. A run that failed without a last event ends with an `error` event carrying `{ code, message }`.
 */
export function eventStream(log: RunLog, after: number): Response {
  return streamResponse(async function* (signal) {
    // The client's reconnection delay if the connection drops.
    yield "retry: 1000\n\n";
    for await (const [id, event] of log.read(after, signal)) yield `id: ${id}\ndata: ${JSON.stringify(event)}\n\n`;
    if (log.failure && !signal.aborted) yield `event: error\ndata: ${JSON.stringify(log.failure)}\n\n`;
  });
}

/** The id a client got up to: `Last-Event-ID`, else `?after=`; 0 for the start. Undefined when malformed. */
export function lastEventId(request: Request): number | undefined {
  const given = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("after");
  if (given === null || given === "") return 0;
  if (!/^\d+$/.test(given.trim())) return undefined;
  return Number(given.trim());
}

