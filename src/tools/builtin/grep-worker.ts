import { Worker } from "node:worker_threads";

/** What one file's search found: matching lines as `[line number, text, cut]`, and whether more matched past `limit`. */
export interface LineMatches {
  found: Array<[line: number, text: string, cut: boolean]>;
  more: boolean;
}

/**
 * The matching loop, run in a worker thread: a JavaScript regular expression can backtrack for minutes on one line
 * (`^(a+)+$` against `aaaa…b`) and nothing interrupts it on the thread it runs on. On a worker, the main thread's
 * event loop stays free (the run's deadline timer fires, Ctrl-C is handled) and the worker is terminated, mid-match,
 * the moment the call's signal aborts. Inline source rather than a file: it runs the same from src/ under the test
 * runner and from the built dist/, with nothing for the build to copy. Loaded as a data: URL, always an ES module
 * (eval'd source would be CommonJS or ESM depending on the process's --input-type).
 */
const WORKER_SOURCE = `
import { parentPort } from "node:worker_threads";
// ignoreBOM keeps a byte-order mark in the text, as Buffer#toString does.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
let compiled = { key: "", regex: undefined };
parentPort.on("message", (request) => {
  const key = request.flags + "/" + request.source;
  if (compiled.key !== key) compiled = { key, regex: new RegExp(request.source, request.flags) };
  const regex = compiled.regex;
  const lines = decoder.decode(request.bytes).split(/\\r?\\n/);
  const found = [];
  let more = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!regex.test(line)) continue;
    if (found.length === request.limit) {
      more = true;
      break;
    }
    const cut = line.length > request.maxLineChars;
    found.push([i + 1, cut ? line.slice(0, request.maxLineChars) : line, cut]);
  }
  parentPort.postMessage({ found, more });
});
`;

const WORKER_URL = new URL(`data:text/javascript,${encodeURIComponent(WORKER_SOURCE)}`);

/** Idle workers kept for the next search (starting one costs tens of milliseconds); a few cover parallel greps. */
const MAX_IDLE_WORKERS = 2;
const idle: Worker[] = [];

function takeWorker(): Worker {
  const reused = idle.pop();
  if (reused) {
    reused.ref();
    return reused;
  }
  const worker = new Worker(WORKER_URL, { name: "statecraft-grep" });
  // A worker that dies while idle (it never should) just leaves the pool.
  worker.on("exit", () => {
    const at = idle.indexOf(worker);
    if (at !== -1) idle.splice(at, 1);
  });
  return worker;
}

function releaseWorker(worker: Worker): void {
  if (idle.length >= MAX_IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  // An idle worker never keeps the process alive.
  worker.unref();
  idle.push(worker);
}

/**
 * The lines of one file's bytes (UTF-8) that `regex` matches, at most `limit` of them, each cut to `maxLineChars`.
 * Runs on a worker thread; when `signal` aborts the worker is terminated wherever it is and this rejects with the
 * signal's reason, so a runaway pattern costs nothing past the call's deadline. The bytes are moved to the worker
 * when they own their memory, so the caller must not use them afterwards.
 */
export function matchLines(bytes: Uint8Array, regex: RegExp, limit: number, maxLineChars: number, signal: AbortSignal): Promise<LineMatches> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const worker = takeWorker();
  return new Promise<LineMatches>((resolve, reject) => {
    const settle = () => {
      signal.removeEventListener("abort", onAbort);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
    };
    const onAbort = () => {
      settle();
      void worker.terminate();
      reject(signal.reason);
    };
    const onMessage = (matches: LineMatches) => {
      settle();
      releaseWorker(worker);
      resolve(matches);
    };
    const onError = (error: Error) => {
      settle();
      void worker.terminate();
      reject(new Error(`grep's matching thread failed: ${error.message}`));
    };
    const onExit = (code: number) => {
      settle();
      reject(new Error(`grep's matching thread stopped unexpectedly (exit code ${code})`));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    // A buffer that is a view into a larger (pooled) one is copied, never moved out from under its other users.
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    const payload = owned ? bytes : new Uint8Array(bytes);
    worker.postMessage({ bytes: payload, source: regex.source, flags: regex.flags, limit, maxLineChars }, [payload.buffer as ArrayBuffer]);
  });
}
