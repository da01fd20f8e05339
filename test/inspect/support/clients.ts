import http from "node:http";
import WebSocket from "ws";
import type { InspectorRecord } from "../../../src/inspect/protocol.js";

/** A GET of the inspector's page (or any path), body as text. */
export function getText(port: number, path = "/"): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The page token, read from the served page as the page itself gets it. */
export async function pageToken(port: number): Promise<string> {
  const token = /<meta name="statecraft-token" content="([^"]*)">/.exec(await getText(port))?.[1];
  if (!token) throw new Error("the page has no token");
  return token;
}

/** Opens a WebSocket to the inspector (at `path`), resolving once open. */
export function connect(port: number, options: WebSocket.ClientOptions & { path?: string; protocols?: string[] } = {}): Promise<WebSocket> {
  const { path = "/", protocols, ...rest } = options;
  return new Promise((resolve, reject) => {
    const ws = protocols ? new WebSocket(`ws://127.0.0.1:${port}${path}`, protocols, rest) : new WebSocket(`ws://127.0.0.1:${port}${path}`, rest);
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

export interface PageClient {
  ws: WebSocket;
  records: InspectorRecord[];
  /** The raw text of every message received (the hello and the replay included). */
  raw: string[];
  next(predicate: (r: InspectorRecord) => boolean): Promise<InspectorRecord>;
}

/** A page as the server sees one (its Origin, its hello), collecting every record; no token unless it sends one. */
export async function pageClient(port: number, options: WebSocket.ClientOptions = {}): Promise<PageClient> {
  const ws = await connect(port, { origin: `http://127.0.0.1:${port}`, ...options });
  const records: InspectorRecord[] = [];
  const raw: string[] = [];
  const waiters: Array<{ predicate: (r: InspectorRecord) => boolean; resolve: (r: InspectorRecord) => void }> = [];
  const take = (r: InspectorRecord) => {
    records.push(r);
    for (const w of [...waiters]) {
      if (w.predicate(r)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(r);
      }
    }
  };
  const ready = new Promise<void>((resolve) => {
    ws.on("message", (data) => {
      raw.push(data.toString());
      const message = JSON.parse(data.toString()) as { type: string; record?: InspectorRecord; records?: InspectorRecord[] };
      if (message.type === "records") {
        for (const r of message.records!) take(r);
        resolve();
      }
      if (message.type === "record") take(message.record!);
    });
  });
  ws.send(JSON.stringify({ type: "@statecraft.hello" }));
  await ready;
  return {
    ws,
    records,
    raw,
    next(predicate) {
      const found = records.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

export type Problem = Extract<InspectorRecord, { kind: "problem" }>;
export const isProblem = (r: InspectorRecord): r is Problem => r.kind === "problem";
