import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream, readFileSync, statSync } from "node:fs";
import http from "node:http";
import type { Socket } from "node:net";
import { basename, resolve } from "node:path";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import type { AnyStateMachine } from "xstate";
import { AgentError } from "../errors/agent-error.js";
import { engineMachine } from "../machine/engine.js";
import type { AgentEvent } from "../events.js";
import type { PermissionRequest } from "../permissions/types.js";
import { isStateMachine, processInspector, socketIngest, type InspectObserver } from "./actors.js";
import { inspectorAssets, type Asset } from "./assets.js";
import { InspectorHub, type PageConnection } from "./hub.js";
import { DEFAULT_MAX_BYTES } from "./record-store.js";
import { checkAllowOrigins } from "./origins.js";
import { isStatelyInspectionEvent } from "./protocol.js";
import { createInspectedRun, type InspectedRun, type InspectedRunInfo, type PermissionRequestOptions } from "./run.js";
import { sendTrace } from "./trace-file.js";
import { TraceFeed } from "./trace-feed.js";

export interface InspectorOptions {
  /** TCP port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** A trace file (JSONL) to show: served to the page at `/trace`, read afresh on every load. */
  traceFile?: string;
  /** The machine drawn for agent runs and trace files (default: the engine's `engineMachine`). */
  machine?: AnyStateMachine;
  /** How long a permission request waits when no page is connected before it is denied (default 10 000 ms). */
  permissionGraceMs?: number;
  /**
   * The most bytes of records kept for pages that connect later (default 64 MB, 67 108 864): past it the oldest records
   * of ended actors and runs are dropped first, then the oldest of live ones (a problem line says so).
   */
  maxBytes?: number;
  /**
   * Origins of browser apps (a dev server such as `http://localhost:5173`) whose pages may connect to the WebSocket and
   * send `@statelyai/inspect` events. They may only send those: they are not sent the records and cannot answer.
   */
  allowOrigins?: string[];
}

/** A running inspector: a page on 127.0.0.1 that shows agent runs, trace files and any XState v5 actor. */
export interface Inspector {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  readonly port: number;
  /** Pages connected right now. A permission request should wait for a page only while this is above 0. */
  readonly pages: number;
  /**
   * An XState inspect observer for any actor in this process: `createActor(machine, { inspect: inspector.inspect })`.
   * The WebSocket at `ws://127.0.0.1:PORT` takes the same from other processes through `@statelyai/inspect`'s
   * `createWebSocketInspector`.
   */
  readonly inspect: InspectObserver;
  /** Starts showing an agent run; feed the returned handle what the run does. */
  attach(run: InspectedRunInfo): InspectedRun;
  /**
   * Shows trace lines (each the JSON text of one line, as in a trace file) recorded by another process, as they
   * arrive: each session is a run on the page from its first line on, going on until its `done` line. Lines are
   * redacted as `/trace` redacts a file; unreadable ones are reported as a problem. `statecraft inspect --database`
   * feeds it the lines statecraft/dbos workers write to PostgreSQL.
   */
  addTraceLines(lines: readonly string[]): void;
  /** `publish` of the run attached last (one is attached for it if there is none). */
  publish(event: AgentEvent): void;
  /** `requestPermission` of the run attached last (one is attached for it if there is none). */
  requestPermission(request: PermissionRequest, options?: PermissionRequestOptions): Promise<"allow" | "deny">;
  /** Resolves once a page is connected (rejects after `timeoutMs`, on abort, or when the inspector closes). */
  waitForPage(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /** Lets the process exit while the inspector still serves (it keeps serving as long as the process lives). */
  unref(): void;
  /** Denies what still waits for an answer, disconnects the pages and stops serving. */
  close(): Promise<void>;
}

const DEFAULT_PERMISSION_GRACE_MS = 10_000;

/** Starts the inspector on 127.0.0.1 and resolves once it listens. */
export async function startInspector(options: InspectorOptions = {}): Promise<Inspector> {
  const { port: wantedPort = 0, permissionGraceMs = DEFAULT_PERMISSION_GRACE_MS, maxBytes = DEFAULT_MAX_BYTES } = options;
  if (!Number.isInteger(wantedPort) || wantedPort < 0 || wantedPort > 65535) {
    throw new AgentError("INVALID_OPTIONS", `inspector port must be an integer from 0 to 65535 (0 picks a free port), got ${String(wantedPort)}`);
  }
  if (typeof permissionGraceMs !== "number" || !Number.isFinite(permissionGraceMs) || permissionGraceMs < 0) {
    throw new AgentError("INVALID_OPTIONS", `permissionGraceMs must be a number of milliseconds >= 0, got ${String(permissionGraceMs)}`);
  }
  if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new AgentError("INVALID_OPTIONS", `maxBytes must be a whole number of bytes >= 1 (default ${DEFAULT_MAX_BYTES}, 64 MB), got ${String(maxBytes)}`);
  }
  const traceFile = options.traceFile === undefined ? undefined : checkTraceFile(options.traceFile);
  if (options.machine !== undefined && !isStateMachine(options.machine)) {
    throw new AgentError("INVALID_OPTIONS", "inspector `machine` must be an XState v5 state machine (from createMachine or setup().createMachine)");
  }
  const machine = options.machine ?? engineMachine;
  const appOrigins = new Set(checkAllowOrigins(options.allowOrigins));

  const hub = new InspectorHub(permissionGraceMs, maxBytes);
  // Only the page this server serves has it (in its HTML); an answer to a permission request must carry it.
  const pageToken = randomBytes(32).toString("base64url");
  // Not secret: lets a page that reconnects tell that another inspector now serves the port.
  const instance = randomBytes(8).toString("hex");
  const defaultChartId = hub.chartOf(machine);
  const assets = inspectorAssets();
  let port = 0;
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const allowedOrigins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);

  const server = http.createServer((req, res) => {
    // A page of another site that resolves its own name to 127.0.0.1 (DNS rebinding) must not read the run.
    if (!allowedHosts().has(req.headers.host ?? "")) return plain(res, 403, "this inspector only answers to http://127.0.0.1:PORT/ or http://localhost:PORT/\n");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      return plain(res, 405, "only GET and HEAD\n");
    }
    let path: string;
    try {
      path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    } catch {
      return plain(res, 400, "bad request path\n");
    }
    if (path === "/favicon.ico") {
      res.writeHead(204, securityHeaders(port));
      return res.end();
    }
    // The trace may still be growing: sent as it is now, redacted line by line.
    if (path === "/trace" && traceFile) return sendTrace(req, res, traceFile, securityHeaders(port));
    const asset = assets.get(path);
    if (!asset) return plain(res, 404, "not found\n");
    if (asset === assets.get("/")) return sendPage(req, res, asset, port, pageToken);
    return sendFile(req, res, asset, port);
  });

  const sockets = new Set<Socket>();
  let unrefed = false;
  server.on("connection", (socket) => {
    sockets.add(socket);
    if (unrefed) socket.unref();
    socket.on("close", () => sockets.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 32 * 1024 * 1024 });
  server.on("upgrade", (req, socket, head) => {
    const origin = req.headers.origin;
    // Node clients (@statelyai/inspect's) send no Origin; a browser always does: our own page, or an allowed app's.
    if (!allowedHosts().has(req.headers.host ?? "") || (origin !== undefined && !allowedOrigins().has(origin) && !appOrigins.has(origin))) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });

  let clients = 0;
  wss.on("connection", (ws: WebSocket, req: http.IncomingMessage) => {
    const client = ++clients;
    // A browser app of an allowed origin: it sends inspection events, and is never a page.
    const appOrigin = req.headers.origin !== undefined && !allowedOrigins().has(req.headers.origin) ? req.headers.origin : undefined;
    const app = clientApp(req.url, client, appOrigin);
    let page: PageConnection | undefined;
    let ingest: ReturnType<typeof socketIngest> | undefined;
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (isBinary) return hub.problem(`WebSocket client ${client} sent binary data; the inspector reads JSON text`);
      let message: unknown;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return hub.problem(`WebSocket client ${client} sent a message that is not JSON: ${data.toString().slice(0, 120)}`);
      }
      if (isStatelyInspectionEvent(message)) {
        ingest ??= socketIngest(hub, client, app);
        return ingest.ingest(message);
      }
      const type = message && typeof message === "object" ? (message as { type?: unknown }).type : undefined;
      if (type === "@statecraft.hello") {
        if (appOrigin) return hub.problem(`WebSocket client ${client} (${appOrigin}) asked to be a page; apps of allowed origins only send inspection events, the records go to the inspector's own page`);
        if (page) return;
        page = {
          send: (text) => {
            if (ws.readyState !== WebSocket.OPEN) return;
            // A page that does not read what it is sent would make its socket's buffer the hub's memory cap's way out.
            if (ws.bufferedAmount > 2 * maxBytes) {
              ws.terminate(); // first: the problem line below is sent to the pages too
              hub.problem(`page ${client} fell more than ${2 * maxBytes} bytes behind the records it is sent and was disconnected; it reconnects and gets the records kept`);
              return;
            }
            ws.send(text);
          },
        };
        return hub.addPage(page, { defaultChartId, instance, allowOrigins: [...appOrigins], ...(traceFile ? { traceFile: basename(traceFile) } : {}) });
      }
      if (type === "@statecraft.answer") {
        const { id, answer, token } = message as { id?: unknown; answer?: unknown; token?: unknown };
        if (typeof id !== "string" || (answer !== "allow" && answer !== "deny")) {
          return hub.problem(`WebSocket client ${client} sent an answer without a request id or with an answer other than "allow" or "deny"`);
        }
        const unauthorised = tokenProblem(token, pageToken);
        if (unauthorised) {
          return hub.problem(
            `WebSocket client ${client} may not answer permission request ${id}: ${unauthorised}; only the inspector's own page (http://127.0.0.1:${port}/) answers permission requests, reload it if it is open`,
          );
        }
        const refused = hub.answer(id, answer, "page");
        if (refused) hub.problem(refused);
        return;
      }
      return hub.problem(`WebSocket client ${client} sent a message of a type the inspector does not know: ${JSON.stringify(type ?? null)}`);
    });
    ws.on("close", () => {
      if (page) hub.removePage(page);
      // Its actors report nothing more: they are ended, not "live" for ever.
      ingest?.end();
    });
    ws.on("error", () => {
      // A broken connection closes; "close" above does the bookkeeping.
    });
  });

  await new Promise<void>((resolveListen, rejectListen) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      const why = error.code === "EADDRINUSE" ? `port ${wantedPort} on 127.0.0.1 is in use; pick another port, or 0 for any free one` : error.message;
      rejectListen(new AgentError("INSPECTOR_LISTEN_FAILED", `the inspector could not listen: ${why}`, { cause: error }));
    };
    const onListening = () => {
      server.off("error", onError);
      resolveListen();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    // Loopback only: the inspector shows prompts, tool inputs and file contents.
    server.listen(wantedPort, "127.0.0.1");
  });
  port = (server.address() as { port: number }).port;

  const inspect = processInspector(hub);
  let lastRun: InspectedRun | undefined;
  let implicitRuns = 0;
  const attach = (info: InspectedRunInfo): InspectedRun => {
    if (!info || typeof info.sessionId !== "string" || info.sessionId === "") {
      throw new AgentError("INVALID_OPTIONS", "inspector.attach needs the run's sessionId (a non-empty string)");
    }
    lastRun = createInspectedRun(hub, info, defaultChartId);
    return lastRun;
  };
  const currentRun = (sessionId?: string) => lastRun ?? attach({ sessionId: sessionId ?? `run-${++implicitRuns}` });
  const traceFeed = new TraceFeed(hub, defaultChartId);

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    get pages() {
      return hub.pageCount;
    },
    inspect,
    attach,
    addTraceLines(lines) {
      if (!Array.isArray(lines) || lines.some((l) => typeof l !== "string")) {
        throw new AgentError("INVALID_OPTIONS", "inspector.addTraceLines takes an array of strings, each the JSON text of one trace line");
      }
      traceFeed.add(lines);
    },
    publish(event) {
      currentRun(event.type === "turn_end" ? event.sessionId : undefined).publish(event);
    },
    requestPermission(request, opts) {
      return currentRun().requestPermission(request, opts);
    },
    waitForPage(opts = {}) {
      return hub.waitForPage(opts.timeoutMs, opts.signal);
    },
    unref() {
      unrefed = true;
      server.unref();
      for (const socket of sockets) socket.unref();
    },
    close() {
      closing ??= new Promise<void>((done) => {
        hub.close();
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => done());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * The name a WebSocket client goes by in the picker: the `app` it gives in its URL (`ws://127.0.0.1:PORT/?app=shop`),
 * kept to 60 plain characters, else `client N`.
 */
function clientApp(url: string | undefined, client: number, origin?: string): string {
  let given: string | null = null;
  try {
    given = new URL(url ?? "/", "http://127.0.0.1").searchParams.get("app");
  } catch {
    given = null;
  }
  const name = (given ?? "").replace(/[^\p{L}\p{N} ._:@/-]/gu, "").trim().slice(0, 60);
  const who = origin ? `client ${client}, ${origin}` : `client ${client}`;
  return name ? `${name} (${who})` : origin ? `${origin} (client ${client})` : who;
}

/**
 * Why `token` is not the page token, or undefined when it is. Compared in constant time, by digest so that lengths
 * need not match.
 */
function tokenProblem(token: unknown, pageToken: string): string | undefined {
  if (token === undefined) return "the answer carries no page token";
  if (typeof token !== "string") return "the answer's token is not a string";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(token), digest(pageToken)) ? undefined : "the answer's token is not this inspector's page token (it changes every time an inspector starts)";
}

function checkTraceFile(file: string): string {
  if (typeof file !== "string" || file === "") throw new AgentError("INVALID_OPTIONS", "inspector traceFile must be a path to a trace file (JSONL)");
  const path = resolve(file);
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new AgentError("INVALID_OPTIONS", `trace file ${file} does not exist; give the path of a trace (by default <project>/.agent/trace.jsonl)`);
  }
  if (!isFile) throw new AgentError("INVALID_OPTIONS", `trace file ${file} is not a file; give the path of a trace (JSONL)`);
  return path;
}

function securityHeaders(port: number): Record<string, string> {
  const sockets = `ws://127.0.0.1:${port} ws://localhost:${port}`;
  return {
    // The page loads nothing from anywhere but this server (Mermaid writes inline styles into its SVG).
    "Content-Security-Policy": `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self' ${sockets}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
}

function plain(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store" });
  res.end(text);
}

const TOKEN_SLOT = '<meta name="statecraft-token" content="">';

/** The page, with this server's token in its slot (the page reads it from there: no inline script under the CSP). */
function sendPage(req: http.IncomingMessage, res: http.ServerResponse, asset: Asset, port: number, token: string): void {
  let html: string;
  try {
    html = readFileSync(asset.file ?? "", "utf8");
  } catch {
    return plain(res, 500, "the inspector's page index.html is missing from the installed package\n");
  }
  if (!html.includes(TOKEN_SLOT)) return plain(res, 500, `the inspector's index.html has no ${TOKEN_SLOT} for the page token; reinstall the statecraft package\n`);
  const body = Buffer.from(html.replace(TOKEN_SLOT, `<meta name="statecraft-token" content="${token}">`), "utf8");
  res.writeHead(200, { ...securityHeaders(port), "Content-Type": asset.type, "Content-Length": String(body.length) });
  res.end(req.method === "HEAD" ? undefined : body);
}

function sendFile(req: http.IncomingMessage, res: http.ServerResponse, asset: Asset, port: number, withLength = true): void {
  if (!asset.file) return plain(res, 500, `${asset.missing ?? "file missing"}\n`);
  let size: number;
  try {
    size = statSync(asset.file).size;
  } catch {
    return plain(res, 500, `the inspector's file ${basename(asset.file)} is missing from the installed package\n`);
  }
  res.writeHead(200, { ...securityHeaders(port), "Content-Type": asset.type, ...(withLength ? { "Content-Length": String(size) } : {}) });
  if (req.method === "HEAD") return void res.end();
  const stream = createReadStream(asset.file);
  stream.on("error", () => res.destroy());
  stream.pipe(res);
}
