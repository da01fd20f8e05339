import { afterEach, describe, expect, it } from "vitest";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { connect, isProblem, pageClient, pageToken } from "./support/clients.js";

let inspector: Inspector | undefined;
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
});

const actorEvent = (sessionId: string) => ({
  type: "@xstate.actor",
  sessionId,
  createdAt: String(Date.now()),
  id: null,
  _version: "0.7.2",
  name: "app",
  definition: JSON.stringify({ id: "app", initial: "a", states: { a: {} } }),
  snapshot: { status: "active", value: "a", context: {} },
});

describe("allowOrigins: browser apps of the origins given", () => {
  it("accepts the origins allowed and sends their actors to the page, named by their origin", async () => {
    inspector = await startInspector({ allowOrigins: ["http://localhost:5173", "https://dev.example.test:8443"] });
    const page = await pageClient(inspector.port);
    for (const origin of ["http://localhost:5173", "https://dev.example.test:8443"]) {
      const ws = await connect(inspector.port, { origin });
      ws.send(JSON.stringify(actorEvent(`x:${origin.length}`)));
      const actor = await page.next((r) => r.kind === "actor" && r.sessionId.endsWith(`/x:${origin.length}`));
      expect((actor as { app?: string }).app).toMatch(new RegExp(`^${origin.replace(/[.]/g, "\\.")} \\(client \\d+\\)$`));
      ws.close();
    }
    page.ws.close();
  });

  it("refuses every other origin: near misses of an allowed one included", async () => {
    inspector = await startInspector({ allowOrigins: ["http://localhost:5173"] });
    for (const origin of [
      "http://localhost:5174",
      "https://localhost:5173",
      "http://localhost:5173.evil.test",
      "http://evil.test",
      "http://127.0.0.1:5173",
      "null",
      "http://localhost",
      "http://sub.localhost:5173",
    ]) {
      await expect(connect(inspector.port, { origin }), origin).rejects.toThrow("HTTP 403");
    }
  });

  it("never makes an allowed app a page: it is not sent the records and cannot answer permission requests", async () => {
    inspector = await startInspector({ allowOrigins: ["http://localhost:5173"] });
    const page = await pageClient(inspector.port);
    const run = inspector.attach({ sessionId: "origin-run" });
    const waiting = run.requestPermission({ call: { id: "c1", name: "shell", input: { command: "rm -rf /" } }, reason: "asked" });
    const app = await connect(inspector.port, { origin: "http://localhost:5173" });
    const received: string[] = [];
    app.on("message", (data) => received.push(data.toString()));
    app.send(JSON.stringify({ type: "@statecraft.hello" }));
    const refused = await page.next((r) => isProblem(r) && r.message.includes("asked to be a page"));
    expect((refused as { message: string }).message).toContain("http://localhost:5173");
    // Even with the real token (which an app cannot read, but say it had it), an app's answer goes through the token
    // check; and it was sent nothing at all.
    app.send(JSON.stringify({ type: "@statecraft.answer", id: "p1", answer: "allow" }));
    await page.next((r) => isProblem(r) && r.message.includes("may not answer permission request p1"));
    expect(received).toEqual([]);
    // The page still can.
    page.ws.send(JSON.stringify({ type: "@statecraft.answer", id: "p1", answer: "deny", token: await pageToken(inspector.port) }));
    await expect(waiting).resolves.toBe("deny");
    app.close();
    page.ws.close();
  });

  const bad: Array<[unknown, RegExp]> = [
    ["localhost:5173", /not an http or https origin/],
    ["http://localhost:5173/app", /more than an origin/],
    ["http://user:pw@localhost:5173", /more than an origin/],
    ["http://localhost:5173?x=1", /more than an origin/],
    ["*", /wildcard/],
    ["http://*.example.test", /wildcard/],
    ["ftp://localhost:5173", /not an http or https origin/],
    ["", /is not an origin/],
    [42, /is not an origin/],
    ["http://LOCALHOST:5173", /not written as browsers send it \(http:\/\/localhost:5173\)/],
    ["http://localhost:80", /not written as browsers send it \(http:\/\/localhost\)/],
  ];
  for (const [origin, message] of bad) {
    it(`rejects allowOrigins ${JSON.stringify(origin)} saying what to give`, async () => {
      await expect(startInspector({ allowOrigins: [origin as string] })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringMatching(message) });
    });
  }
  it("rejects allowOrigins that is not a list", async () => {
    await expect(startInspector({ allowOrigins: "http://localhost:5173" as never })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringMatching(/must be a list of origins/) });
  });
});
