import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createActor, createMachine } from "xstate";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";
import { removeDir, tempDir } from "../support/engine.js";

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A GET with the path sent exactly as written (no normalisation) and the given headers. */
function get(port: number, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The page token, read from the served page as the page itself gets it. */
async function pageToken(port: number): Promise<string> {
  const page = await get(port, "/");
  return /<meta name="statecraft-token" content="([^"]+)">/.exec(page.body)![1]!;
}

/** Opens a WebSocket, resolving with it once open, or rejecting with the HTTP status the server answered. */
function connect(port: number, options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, options);
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

/** A page as the server sees one: says hello, collects every record. */
async function pageClient(port: number): Promise<{ ws: WebSocket; records: InspectorRecord[]; hello: Record<string, unknown>; next(predicate: (r: InspectorRecord) => boolean): Promise<InspectorRecord> }> {
  const ws = await connect(port, { origin: `http://127.0.0.1:${port}` });
  const records: InspectorRecord[] = [];
  const waiters: Array<{ predicate: (r: InspectorRecord) => boolean; resolve: (r: InspectorRecord) => void }> = [];
  let hello: Record<string, unknown> = {};
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
      const message = JSON.parse(data.toString()) as { type: string; record?: InspectorRecord; records?: InspectorRecord[] };
      if (message.type === "hello") hello = message as unknown as Record<string, unknown>;
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
    get hello() {
      return hello;
    },
    next(predicate) {
      const found = records.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

const toggle = createMachine({ id: "toggle", initial: "off", states: { off: { on: { FLIP: "on" } }, on: { on: { FLIP: "off" } } } });

describe("inspector server: what it serves", () => {
  let dir: string;
  let traceFile: string;
  let inspector: Inspector;

  beforeAll(async () => {
    dir = tempDir("statecraft-inspect-server-");
    traceFile = join(dir, "trace.jsonl");
    writeFileSync(traceFile, '{"v":1,"sessionId":"s1","seq":0,"time":"2026-01-01T00:00:00.000Z","kind":"state","state":"build_context","turn":0,"details":{}}\n');
    writeFileSync(join(dir, "secret.txt"), "not for the page");
    inspector = await startInspector({ traceFile, machine: toggle });
  });

  afterAll(async () => {
    await inspector.close();
    removeDir(dir);
  });

  it("listens on 127.0.0.1 only and says where", async () => {
    expect(inspector.url).toBe(`http://127.0.0.1:${inspector.port}/`);
    expect(inspector.port).toBeGreaterThan(0);
    // Reachable on loopback…
    expect((await get(inspector.port, "/")).status).toBe(200);
    // …and not on any other address of this machine.
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a): a is NonNullable<typeof a> => !!a && a.family === "IPv4" && !a.internal)
      .map((a) => a.address);
    for (const address of others) {
      const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        const socket = net.connect({ host: address, port: inspector.port });
        socket.once("connect", () => {
          socket.destroy();
          resolve(undefined);
        });
        socket.once("error", (e) => resolve(e));
      });
      expect(error?.code, `connecting via ${address}`).toBe("ECONNREFUSED");
    }
  });

  it("serves the page, its scripts and style, the layout library and the trace, with a policy that allows nothing from elsewhere", async () => {
    const index = await get(inspector.port, "/");
    expect(index.headers["content-type"]).toMatch(/^text\/html/);
    expect(index.body).toContain('aria-label="scrubber"');
    expect(index.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(index.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(index.headers["content-security-policy"]).toContain(`connect-src 'self' ws://127.0.0.1:${inspector.port} ws://localhost:${inspector.port}`);
    expect((await get(inspector.port, "/app.js")).headers["content-type"]).toMatch(/^text\/javascript/);
    expect((await get(inspector.port, "/style.css")).headers["content-type"]).toMatch(/^text\/css/);
    for (const script of ["/actor-tree.js", "/chart-graph.js", "/chart-model.js", "/chart-svg.js", "/sequence.js", "/virtual-rows.js", "/vendor/elk-api.js"]) {
      const asset = await get(inspector.port, script);
      expect(asset.status, script).toBe(200);
      expect(asset.headers["content-type"], script).toMatch(/^text\/javascript/);
    }
    const worker = await get(inspector.port, "/vendor/elk-worker.min.js");
    expect(worker.status).toBe(200);
    expect(worker.body.length).toBeGreaterThan(1_000_000);
    // The diagram library the page used before ELK is no longer served.
    expect((await get(inspector.port, "/vendor/mermaid.min.js")).status).toBe(404);
    const trace = await get(inspector.port, "/trace");
    expect(trace.status).toBe(200);
    expect(trace.body).toContain('"sessionId":"s1"');
    // The page's HTML refers to nothing outside the server.
    expect(index.body).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves every module the page imports, from app.js down, as it is on disk, and every module of the page folder is one of them", async () => {
    const pageDir = join(import.meta.dirname, "../../src/inspect/page");
    const seen = new Set<string>();
    const queue = ["app.js"];
    while (queue.length) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const reply = await get(inspector.port, `/${name}`);
      expect(reply.status, name).toBe(200);
      expect(reply.headers["content-type"], name).toMatch(/^text\/javascript/);
      expect(reply.body, name).toBe(readFileSync(join(pageDir, name), "utf8"));
      for (const m of reply.body.matchAll(/^import [^;]*? from "\.\/([\w-]+\.js)";$/gm)) queue.push(m[1]!);
    }
    // The split page really is split: app.js imports the parts, and no module is left out of the graph.
    expect(seen.size).toBeGreaterThan(10);
    const onDisk = readdirSync(pageDir).filter((f) => f.endsWith(".js"));
    expect([...seen].sort()).toEqual(onDisk.sort());
  });

  it("serves no other file whatever the path: .., encoded or not", async () => {
    const paths = [
      "/../package.json",
      "/..%2fpackage.json",
      "/%2e%2e/%2e%2e/package.json",
      "/%2E%2E%2F%2E%2E%2Fpackage.json",
      "/page/app.js",
      "/app.js/../../server.ts",
      "/vendor/../../../package.json",
      "/vendor/mermaid.js",
      "/trace/../secret.txt",
      "/secret.txt",
      "/trace.jsonl",
      "//etc/passwd",
      "/..\\..\\package.json",
      "/%5c..%5c..%5cpackage.json",
      "/server.ts",
      "/index.html%00.js",
      "/.git/config",
    ];
    for (const path of paths) {
      const reply = await get(inspector.port, path);
      expect(reply.status, path).toBe(404);
      expect(reply.body, path).toBe("not found\n");
    }
    // A raw request line that is not even a path.
    const raw = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port: inspector.port }, () => socket.write(`GET ../../package.json HTTP/1.1\r\nHost: 127.0.0.1:${inspector.port}\r\nConnection: close\r\n\r\n`));
      let text = "";
      socket.on("data", (d) => (text += d.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", () => resolve(text));
    });
    expect(raw).not.toContain('"name": "statecraft"');
    expect(raw).toMatch(/^HTTP\/1\.1 (400|404)/);
  });

  it("answers only to its own host name (no DNS rebinding) and only GET/HEAD", async () => {
    expect((await get(inspector.port, "/", { Host: `localhost:${inspector.port}` })).status).toBe(200);
    expect((await get(inspector.port, "/", { Host: `evil.example:${inspector.port}` })).status).toBe(403);
    expect((await get(inspector.port, "/trace", { Host: "127.0.0.1" })).status).toBe(403);
    const post = await get(inspector.port, "/", {}, "POST");
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
  });

  it("accepts WebSocket connections without an Origin or from its own origin, refuses any other", async () => {
    const none = await connect(inspector.port);
    none.close();
    for (const origin of [`http://127.0.0.1:${inspector.port}`, `http://localhost:${inspector.port}`]) {
      const ws = await connect(inspector.port, { origin });
      ws.close();
    }
    for (const origin of ["http://evil.example", `http://127.0.0.1:${inspector.port + 1}`, "null", `https://127.0.0.1:${inspector.port}`, "file://"]) {
      await expect(connect(inspector.port, { origin }), origin).rejects.toThrow("HTTP 403");
    }
    await expect(connect(inspector.port, { headers: { Host: `evil.example:${inspector.port}` } })).rejects.toThrow("HTTP 403");
  });
});

describe("inspector server: runs, pages and permissions", () => {
  let inspector: Inspector | undefined;
  afterEach(async () => {
    await inspector?.close();
    inspector = undefined;
  });

  it("sends a page that connects late everything so far, then what follows", async () => {
    inspector = await startInspector({ machine: toggle });
    const actor = createActor(toggle, { inspect: inspector.inspect }).start();
    actor.send({ type: "FLIP" });
    const run = inspector.attach({ sessionId: "run-a", input: "hello" });
    run.publish({ type: "text_delta", text: "Hi" });
    const page = await pageClient(inspector.port);
    expect(page.hello.defaultChartId).toBe("c0");
    const kinds = page.records.map((r) => r.kind);
    expect(kinds[0]).toBe("chart");
    expect(kinds).toContain("actor");
    expect(page.records.filter((r) => r.kind === "snapshot").map((r) => (r as { snapshot: { value?: unknown } }).snapshot.value)).toContain("on");
    expect(page.records.find((r) => r.kind === "run")).toMatchObject({ sessionId: "run-a", input: "hello" });
    expect(page.records.find((r) => r.kind === "agent")).toMatchObject({ sessionId: "run-a", event: { type: "text_delta", text: "Hi" } });
    run.publish({ type: "text_delta", text: " there" });
    await page.next((r) => r.kind === "agent" && (r.event as { text?: string }).text === " there");
    actor.stop();
    page.ws.close();
  });

  it("resolves a permission request with the answer a page gives, and tells every page", async () => {
    inspector = await startInspector({ machine: toggle });
    const first = await pageClient(inspector.port);
    const second = await pageClient(inspector.port);
    await expect.poll(() => inspector!.pages).toBe(2);
    const run = inspector.attach({ sessionId: "run-b" });
    const answer = run.requestPermission({ call: { id: "call-1", name: "write_note", input: { note: "x" } }, reason: "write_note is a write tool" });
    const asked = (await first.next((r) => r.kind === "permission")) as Extract<InspectorRecord, { kind: "permission" }>;
    expect(asked).toMatchObject({ sessionId: "run-b", call: { id: "call-1", name: "write_note", input: { note: "x" } }, reason: "write_note is a write tool" });
    first.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "allow", token: await pageToken(inspector.port) }));
    await expect(answer).resolves.toBe("allow");
    await second.next((r) => r.kind === "permission_answer" && r.id === asked.id && r.answer === "allow" && r.by === "page");
    // A second answer to the same request changes nothing and is reported.
    first.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "deny", token: await pageToken(inspector.port) }));
    await second.next((r) => r.kind === "problem" && r.message.includes(asked.id));
    first.ws.close();
    second.ws.close();
  });

  it("withdraws a request answered elsewhere, denies when no page stays connected, and when closing", async () => {
    inspector = await startInspector({ machine: toggle, permissionGraceMs: 50 });
    const request = { call: { id: "c", name: "bash", input: { command: "ls" } }, reason: "exec" };
    const page = await pageClient(inspector.port);

    const controller = new AbortController();
    const withdrawn = inspector.requestPermission(request, { signal: controller.signal });
    const asked = await page.next((r) => r.kind === "permission");
    controller.abort(new Error("answered in the terminal"));
    await expect(withdrawn).rejects.toThrow("answered in the terminal");
    await page.next((r) => r.kind === "permission_answer" && r.id === (asked as { id: string }).id && r.by === "elsewhere");

    // The last page goes away: after the grace period the request is denied rather than waiting forever.
    page.ws.close();
    await expect.poll(() => inspector!.pages).toBe(0);
    await expect(inspector.requestPermission(request)).resolves.toBe("deny");

    const closing = await startInspector({ machine: toggle });
    const pending = closing.requestPermission(request);
    await closing.close();
    await expect(pending).resolves.toBe("deny");
  });

  it("reports what a client sends that it cannot use instead of dropping it", async () => {
    inspector = await startInspector({ machine: toggle });
    const page = await pageClient(inspector.port);
    const client = await connect(inspector.port);
    client.send("not json");
    client.send(JSON.stringify({ type: "something.else" }));
    client.send(JSON.stringify({ type: "@statecraft.answer", id: 5, answer: "maybe" }));
    await page.next((r) => r.kind === "problem" && r.message.includes("not JSON"));
    await page.next((r) => r.kind === "problem" && r.message.includes('"something.else"'));
    await page.next((r) => r.kind === "problem" && r.message.includes('"allow" or "deny"'));
    client.close();
    page.ws.close();
  });

  it("draws a machine from the definition an @statelyai/inspect client sends, and records its snapshots", async () => {
    inspector = await startInspector({ machine: toggle });
    const page = await pageClient(inspector.port);
    // The page is the server's client 1; this one is client 2, whose session ids are prefixed accordingly.
    const client = await connect(inspector.port);
    const definition = JSON.stringify({ id: "light", initial: "green", states: { green: { after: { 100: "yellow" } }, yellow: { always: { target: "red", guard: { type: "ready" } } }, red: {} } });
    client.send(JSON.stringify({ type: "@xstate.actor", name: "light", sessionId: "x:0", rootId: "x:0", createdAt: "1767225600000", id: null, _version: "0.7.2", definition, snapshot: { status: "active", value: "green", context: {} } }));
    client.send(JSON.stringify({ type: "@xstate.snapshot", sessionId: "x:0", rootId: "x:0", createdAt: "1767225600100", id: null, _version: "0.7.2", event: { type: "xstate.after.100.light.green" }, snapshot: { status: "active", value: "red", context: { n: 1 } } }));
    const chart = (await page.next((r) => r.kind === "chart" && r.chart.machineId === "light")) as Extract<InspectorRecord, { kind: "chart" }>;
    expect(chart.chart.edges.map((e) => `${e.from}>${e.to}:${e.kind}`)).toEqual(["[*]>green:initial", "green>yellow:after", "yellow>red:always"]);
    const actor = await page.next((r) => r.kind === "actor" && r.name === "light");
    expect(actor).toMatchObject({ sessionId: "ws2/x:0", chartId: chart.chartId, origin: "socket", time: "2026-01-01T00:00:00.000Z" });
    const snapshot = await page.next((r) => r.kind === "snapshot" && r.sessionId === "ws2/x:0");
    expect(snapshot).toMatchObject({ snapshot: { value: "red", context: { n: 1 } }, event: { type: "xstate.after.100.light.green" } });
    client.close();
    page.ws.close();
  });
});

describe("inspector server: options", () => {
  it("refuses bad options with errors that say how to fix them", async () => {
    await expect(startInspector({ port: -1 })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("0 to 65535") });
    await expect(startInspector({ port: 1.5 })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(startInspector({ traceFile: "/nonexistent/trace.jsonl" })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("does not exist") });
    const dir = tempDir();
    try {
      await expect(startInspector({ traceFile: dir })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("is not a file") });
    } finally {
      removeDir(dir);
    }
    await expect(startInspector({ machine: {} as never })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("XState v5 state machine") });
    await expect(startInspector({ permissionGraceMs: -5 })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });

  it("says when the port is taken", async () => {
    const first = await startInspector({ machine: toggle });
    try {
      await expect(startInspector({ port: first.port, machine: toggle })).rejects.toMatchObject({
        code: "INSPECTOR_LISTEN_FAILED",
        message: expect.stringContaining(`port ${first.port} on 127.0.0.1 is in use`),
      });
    } finally {
      await first.close();
    }
  });

  it("waits for a page, and stops waiting when it closes", async () => {
    const inspector = await startInspector({ machine: toggle });
    const waiting = inspector.waitForPage();
    const page = await pageClient(inspector.port);
    await expect(waiting).resolves.toBeUndefined();
    page.ws.close();
    await expect.poll(() => inspector.pages).toBe(0);
    const never = inspector.waitForPage();
    await inspector.close();
    await expect(never).rejects.toThrow("closed");
    await expect(inspector.waitForPage({ timeoutMs: 10 })).rejects.toThrow("closed");
  });
});
