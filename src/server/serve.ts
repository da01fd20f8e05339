import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { guard, HttpProblem, json, problemResponse, readJson, type GuardSettings } from "./http-guard.js";
import { checkServeOptions, type ServeOptions } from "./serve-options.js";
import { nodeHandler } from "./node-adapter.js";
import { localRunner } from "./local-runner.js";
import { answersOf, bad, problemOfError, sessionIdOf, startRequestOf, type ServerRunSettings } from "./run-request.js";
import type { Runner } from "./runner.js";
import { eventStream, lastEventId } from "./sse.js";
import { chatRoute, chatStreamRoute } from "./chat-route.js";
import { agUiRoute } from "./ag-ui-route.js";

/**
 * A running statecraft server: a Node `(req, res)` handler itself (`http.createServer(server)`), with `fetch` for a
 * fetch runtime or framework (`(request) => response`), `listen` to serve it on its own, and `close`.
 */
export interface StatecraftServer {
  (req: IncomingMessage, res: ServerResponse): void;
  fetch(request: Request): Promise<Response>;
  /** Listens on `host` (default 127.0.0.1) and `port` (default 0: a free one); resolves with its URL. */
  listen(port?: number, host?: string): Promise<{ url: string; port: number }>;
  /** Stops listening, aborts the runs running in this process (a suspended run stays stored), stops the worker. */
  close(): Promise<void>;
}

/** What a route gets: the request, its path's parts, and the server's parts. */
export interface RouteContext {
  request: Request;
  url: URL;
  runner: Runner;
  settings: ServerRunSettings;
  maxBodyBytes: number;
}

/**
 * Serves agent runs over HTTP (docs/server.md): runs with resumable Server-Sent Events, approvals, the AI SDK UI
 * message stream (`POST /api/chat`) and AG-UI (`POST /ag-ui`), behind a bearer token.
 */
export function serve(options: ServeOptions): StatecraftServer {
  const checked = checkServeOptions(options);
  const guardSettings: GuardSettings = { token: options.token, hosts: checked.hosts, origins: checked.origins };
  const settings: ServerRunSettings = { permissions: options.permissions ?? {}, limits: options.runOptions ?? {} };
  const cwd = resolve(options.cwd ?? process.cwd());
  let runner: Promise<Runner> | undefined;
  const runnerOf = () =>
    (runner ??= options.database
      ? import("./dbos-runner.js").then((m) => m.dbosRunner({ database: options.database!, model: options.model, tools: options.tools ?? [], cwd, permissions: settings.permissions, ...(options.logger ? { logger: options.logger } : {}) }))
      : Promise.resolve(localRunner({ model: options.model, tools: options.tools ?? [], cwd, store: options.store ?? "file", ...(options.traceFile !== undefined ? { traceFile: options.traceFile } : {}), ...(options.logger ? { logger: options.logger } : {}) })));

  const fetchHandler = async (request: Request): Promise<Response> => {
    const cors = corsHeaders(request, checked.origins);
    try {
      if (request.method === "OPTIONS" && cors) return new Response(null, { status: 204, headers: { ...cors, "Access-Control-Allow-Methods": "GET, POST", "Access-Control-Allow-Headers": "authorization, content-type, last-event-id", "Access-Control-Max-Age": "600" } });
      guard(request, guardSettings);
      const url = new URL(request.url);
      const response = await route({ request, url, runner: await runnerOf(), settings, maxBodyBytes: checked.maxBodyBytes });
      if (cors) for (const [key, value] of Object.entries(cors)) response.headers.set(key, value);
      return response;
    } catch (error) {
      const response = problemResponse(problemOfError(error));
      if (cors) for (const [key, value] of Object.entries(cors)) response.headers.set(key, value);
      return response;
    }
  };

  const server = nodeHandler(fetchHandler) as StatecraftServer;
  let listening: http.Server | undefined;
  server.fetch = fetchHandler;
  server.listen = async (port = 0, host = "127.0.0.1") => {
    if (listening) throw new HttpProblem(500, "ALREADY_LISTENING", "this server already listens; serve() again for a second one");
    const node = http.createServer(server);
    listening = node;
    await new Promise<void>((done, fail) => {
      node.once("error", fail);
      node.listen(port, host, () => {
        node.off("error", fail);
        done();
      });
    });
    const address = node.address() as AddressInfo;
    const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return { url: `http://${shown}:${address.port}`, port: address.port };
  };
  server.close = async () => {
    if (listening) {
      const node = listening;
      listening = undefined;
      node.closeAllConnections();
      await new Promise<void>((done) => node.close(() => done()));
    }
    if (runner) await (await runner).close();
  };
  return server;
}

/** The CORS headers for an allowed app's origin (none for a same-origin or a Node client). */
function corsHeaders(request: Request, origins: readonly string[]): Record<string, string> | undefined {
  const origin = request.headers.get("origin");
  if (origin === null || !origins.includes(origin)) return undefined;
  return { "Access-Control-Allow-Origin": origin, Vary: "Origin", "Access-Control-Expose-Headers": "x-vercel-ai-ui-message-stream" };
}

const RUN_PATH = /^\/runs\/([^/]+)\/(events|answers|abort)$/;

async function route(context: RouteContext): Promise<Response> {
  const { request, url, runner } = context;
  const path = url.pathname;
  const method = request.method;
  const only = (allowed: string) => {
    if (method !== allowed) throw new HttpProblem(405, "METHOD_NOT_ALLOWED", `${path} takes ${allowed}, not ${method}`, { Allow: allowed });
  };
  if (path === "/runs") {
    if (method === "GET") return listRuns(context);
    only("POST");
    const started = await runner.start(startRequestOf(await readJson(request, context.maxBodyBytes), context.settings));
    return json(201, { sessionId: started.sessionId, runId: started.runId }, { Location: `/runs/${started.runId}` });
  }
  const run = RUN_PATH.exec(path);
  if (run) {
    const [, runId, what] = run;
    const log = await runner.find(decodeURIComponent(runId!));
    if (!log) throw new HttpProblem(404, "RUN_NOT_FOUND", `this server has no run ${decodeURIComponent(runId!)} (POST /runs starts one; GET /runs?sessionId= lists a session's)`);
    if (what === "events") {
      only("GET");
      const after = lastEventId(request);
      if (after === undefined) throw bad("Last-Event-ID must be the id of an event this stream sent (a whole number)");
      if (after > log.lastId) throw bad(`Last-Event-ID ${after} is past the last event of run ${log.runId} (${log.lastId}); it is not an id this run's stream sent`);
      return eventStream(log, after);
    }
    only("POST");
    if (what === "answers") {
      const answers = answersOf(await readJson(request, context.maxBodyBytes), `POST /runs/${log.runId}/answers`);
      await runner.answer(log, answers, "statecraft serve (POST /runs/:runId/answers)");
      return json(202, { runId: log.runId, status: log.status });
    }
    await runner.abort(log);
    return json(202, { runId: log.runId, status: log.status });
  }
  if (path.startsWith("/sessions/")) {
    only("GET");
    const sessionId = sessionIdOf(decodeURIComponent(path.slice("/sessions/".length)), "the session id in /sessions/:id");
    const messages = await runner.messages(sessionId);
    if (!messages) throw new HttpProblem(404, "SESSION_NOT_FOUND", `there is no session ${sessionId} here (POST /runs starts one)`);
    return json(200, { sessionId, messages, runs: (await runner.runsOf(sessionId)).map((log) => log.info()) });
  }
  if (path === "/api/chat") {
    only("POST");
    return chatRoute(context);
  }
  const chatStream = /^\/api\/chat\/([^/]+)\/stream$/.exec(path);
  if (chatStream) {
    only("GET");
    return chatStreamRoute(context, decodeURIComponent(chatStream[1]!));
  }
  if (path === "/ag-ui") {
    only("POST");
    return agUiRoute(context);
  }
  throw new HttpProblem(404, "NOT_FOUND", `no route ${method} ${path}; the routes are POST /runs, GET /runs?sessionId=, GET /runs/:runId/events, POST /runs/:runId/answers, POST /runs/:runId/abort, GET /sessions/:id, POST /api/chat, POST /ag-ui`);
}

async function listRuns({ url, runner }: RouteContext): Promise<Response> {
  for (const key of url.searchParams.keys()) if (key !== "sessionId") throw bad(`GET /runs takes ?sessionId=, not ?${key}=`);
  const given = url.searchParams.get("sessionId");
  if (given === null) throw bad("GET /runs needs ?sessionId=<id>: the session whose runs to list");
  const sessionId = sessionIdOf(given, "sessionId");
  return json(200, { sessionId, runs: (await runner.runsOf(sessionId)).map((log) => log.info()) });
}
