import http from "node:http";
import net from "node:net";
import { hostAllowed } from "./allow-list.js";

/** A connection the proxy refused: what the trace records. */
export interface RefusedConnection {
  host: string;
  port: number;
  via: "http" | "connect" | "socks5";
}

export interface AllowListProxy {
  /** Where it listens: a Unix socket path, bound into the sandbox. */
  readonly socket: string;
  /** Connections refused so far. */
  readonly refused: readonly RefusedConnection[];
  close(): Promise<void>;
}

const refusal = (host: string, port: number) =>
  `statecraft sandbox: ${host}:${port} is not in sandbox.network.allow; this connection was refused (add the host to sandbox.network.allow to reach it)\n`;

/**
 * The proxy a sandboxed process must go through when `sandbox.network` is `{ allow }`: one listener speaking HTTP
 * (CONNECT tunnels and absolute-form requests) and SOCKS5 (CONNECT, no authentication), told apart by the first byte
 * (5 is SOCKS5's version). A host not allowed gets 403 (HTTP) or reply 2, "connection not allowed by ruleset"
 * (SOCKS5), and is recorded. The process has no other way out: its network namespace holds only its own loopback.
 */
export async function startAllowListProxy(socket: string, allow: readonly string[]): Promise<AllowListProxy> {
  const refused: RefusedConnection[] = [];
  const open = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    open.add(s);
    s.on("close", () => open.delete(s));
    s.on("error", () => s.destroy());
  };
  const allowed = (host: string, port: number, via: RefusedConnection["via"]) => {
    if (hostAllowed(allow, host, port)) return true;
    refused.push({ host, port, via });
    return false;
  };
  const httpServer = http.createServer((req, res) => forwardRequest(req, res, allowed));
  httpServer.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => tunnel(req, client, head, allowed, track));
  const server = net.createServer((client) => {
    track(client);
    client.once("data", (first: Buffer) => {
      client.pause();
      if (first[0] === 5) return socks5(client, first, allowed, track);
      client.unshift(first);
      httpServer.emit("connection", client);
      client.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  return {
    socket,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function splitHostPort(authority: string, fallbackPort: number): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  return m ? { host: m[1], port: m[2] !== undefined ? Number(m[2]) : fallbackPort } : { host: authority, port: fallbackPort };
}

function tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer, allowed: (h: string, p: number, v: "connect") => boolean, track: (s: net.Socket) => void): void {
  const { host, port } = splitHostPort(req.url ?? "", 443);
  if (!allowed(host, port, "connect")) {
    const body = refusal(host, port);
    client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    return;
  }
  const upstream = net.connect(port, host.replace(/^\[|\]$/g, ""), () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  track(upstream);
  upstream.on("error", (error) => {
    if (!client.writableEnded) client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${error.message}\n`);
  });
  client.on("close", () => upstream.destroy());
}

function forwardRequest(req: http.IncomingMessage, res: http.ServerResponse, allowed: (h: string, p: number, v: "http") => boolean): void {
  let target: URL;
  try {
    target = new URL(req.url ?? "");
  } catch {
    res.writeHead(400, { "content-type": "text/plain" }).end("statecraft sandbox: the proxy takes absolute-form requests (http://host/path) and CONNECT\n");
    return;
  }
  const port = target.port !== "" ? Number(target.port) : target.protocol === "https:" ? 443 : 80;
  if (target.protocol !== "http:" || !allowed(target.hostname, port, "http")) {
    res.writeHead(403, { "content-type": "text/plain" }).end(refusal(target.hostname, port));
    return;
  }
  const upstream = http.request({ host: target.hostname.replace(/^\[|\]$/g, ""), port, method: req.method, path: `${target.pathname}${target.search}`, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`statecraft sandbox proxy: ${error.message}\n`);
  });
  req.pipe(upstream);
}

/** RFC 1928: greeting, then one CONNECT request; IPv4, domain name and IPv6 addresses. */
function socks5(client: net.Socket, first: Buffer, allowed: (h: string, p: number, v: "socks5") => boolean, track: (s: net.Socket) => void): void {
  let buffer = first;
  let greeted = false;
  const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
  const onData = (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    step();
  };
  const step = (): void => {
    if (!greeted) {
      if (buffer.length < 2 || buffer.length < 2 + buffer[1]) return;
      const methods = buffer.subarray(2, 2 + buffer[1]);
      buffer = buffer.subarray(2 + buffer[1]);
      greeted = true;
      if (!methods.includes(0)) return void client.end(Buffer.from([5, 0xff]));
      client.write(Buffer.from([5, 0]));
    }
    if (buffer.length < 5) return;
    const [version, command, , type] = buffer;
    let host: string;
    let offset: number;
    if (type === 1) {
      if (buffer.length < 10) return;
      host = [...buffer.subarray(4, 8)].join(".");
      offset = 8;
    } else if (type === 3) {
      if (buffer.length < 5 + buffer[4] + 2) return;
      host = buffer.subarray(5, 5 + buffer[4]).toString("latin1");
      offset = 5 + buffer[4];
    } else if (type === 4) {
      if (buffer.length < 22) return;
      const words: string[] = [];
      for (let i = 4; i < 20; i += 2) words.push(buffer.readUInt16BE(i).toString(16));
      host = words.join(":");
      offset = 20;
    } else return void client.end(reply(8));
    const port = buffer.readUInt16BE(offset);
    const rest = buffer.subarray(offset + 2);
    client.off("data", onData);
    if (version !== 5 || command !== 1) return void client.end(reply(7));
    if (!allowed(host, port, "socks5")) return void client.end(reply(2));
    const upstream = net.connect(port, host, () => {
      client.write(reply(0));
      if (rest.length > 0) upstream.write(rest);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      if (!client.writableEnded) client.end(reply(error.code === "ECONNREFUSED" ? 5 : error.code === "ENOTFOUND" ? 4 : 1));
    });
    client.on("close", () => upstream.destroy());
  };
  client.on("data", onData);
  client.resume();
  step();
}
