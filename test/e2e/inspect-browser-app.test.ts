import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, screenshot, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

/*
 * A browser app as a Vite dev server serves one: a page of another origin (http://localhost:DEV_PORT) whose script
 * connects to the inspector's WebSocket and sends what @statelyai/inspect's createWebSocketInspector sends (the
 * same three event shapes, written out here: the page has no bundler to load the package with).
 */
const APP = `<!doctype html><meta charset="utf-8"><title>shop</title><p id="status">connecting</p>
<script type="module">
const url = new URL(location.href).searchParams.get("inspector");
const ws = new WebSocket(url);
const base = () => ({ createdAt: String(Date.now()), id: null, _version: "0.7.2", rootId: "x:0" });
const definition = JSON.stringify({ id: "cart", initial: "empty", states: { empty: { on: { ADD: "full" } }, full: { on: { CLEAR: "empty" } } } });
ws.onopen = () => {
  document.getElementById("status").textContent = "open";
  ws.send(JSON.stringify({ ...base(), type: "@xstate.actor", sessionId: "x:0", name: "cart", definition, snapshot: { status: "active", value: "empty", context: { items: 0 } } }));
  ws.send(JSON.stringify({ ...base(), type: "@xstate.event", sessionId: "x:0", event: { type: "ADD" } }));
  ws.send(JSON.stringify({ ...base(), type: "@xstate.snapshot", sessionId: "x:0", event: { type: "ADD" }, snapshot: { status: "active", value: "full", context: { items: 1 } } }));
};
ws.onerror = () => { document.getElementById("status").textContent = "refused"; };
</script>`;

function devServer(): Promise<http.Server & { port: number }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(APP);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(Object.assign(server, { port: (server.address() as AddressInfo).port }))));
}

let allowed: http.Server & { port: number };
let other: http.Server & { port: number };
let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  allowed = await devServer();
  other = await devServer();
  inspector = await startInspector({ allowOrigins: [`http://localhost:${allowed.port}`] });
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  allowed?.close();
  other?.close();
});

describeWithBrowser("inspector: browser apps on allowed origins", () => {
  it("an app on an allowed origin connects and is drawn; one on another origin is refused", async () => {
    const { page } = browser;
    await page.goto(inspector.url);
    await expect.poll(() => page.locator("#connection").getAttribute("data-connection"), WAIT).toBe("connected");
    expect(await page.getByRole("list", { name: "allowed origins" }).locator("li").allTextContents()).toEqual([`http://localhost:${allowed.port}`]);
    const ws = `ws://127.0.0.1:${inspector.port}/?app=shop`;

    const app = await browser.context.newPage();
    await app.goto(`http://localhost:${allowed.port}/?inspector=${encodeURIComponent(ws)}`);
    await expect.poll(() => app.locator("#status").textContent(), WAIT).toBe("open");
    const picker = page.getByRole("combobox", { name: "session" });
    await expect.poll(() => picker.locator("option").allTextContents(), WAIT).toEqual([
      expect.stringMatching(new RegExp(`^shop \\(client \\d+, http://localhost:${allowed.port}\\) · cart · x:0 \\(live\\)$`)),
    ]);
    await expect.poll(() => page.locator('#chart [data-state][aria-current="true"]').getAttribute("data-state"), WAIT).toBe("full");
    await screenshot(page, "browser-app");

    const refused = await browser.context.newPage();
    await refused.goto(`http://localhost:${other.port}/?inspector=${encodeURIComponent(ws)}`);
    await expect.poll(() => refused.locator("#status").textContent(), WAIT).toBe("refused");
    expect(await picker.locator("option").count()).toBe(1);

    // The app's tab closes: its actor is no longer live.
    await app.close();
    await expect.poll(() => picker.locator("option").allTextContents(), WAIT).toEqual([expect.not.stringContaining("(live)")]);
    await refused.close();
  });

  it("the inspector's page made no request outside 127.0.0.1 and raised no error", () => {
    // The apps' own pages are on localhost (another origin) by design; the inspector's page requests only 127.0.0.1.
    const inspectorRequests = browser.requests.filter((url) => !url.includes(`localhost:${allowed.port}`) && !url.includes(`localhost:${other.port}`));
    expect(foreignRequests(inspectorRequests)).toEqual([]);
    expect(browser.errors.filter((e) => !e.includes("WebSocket"))).toEqual([]);
  });
});
