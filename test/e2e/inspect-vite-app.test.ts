import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { removeDir, tempDir } from "../support/engine.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, screenshot, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

/*
 * A browser app as people write one: a Vite dev server (vite's own JS API) serving a small XState app from a temp
 * folder, its main.js connecting with @statelyai/inspect's createWebSocketInspector as docs/inspector.md says. The
 * app is driven through its own buttons in headless Chromium; the inspector's page must list its actors as a tree,
 * draw the machine, follow it, and show the events between the parent and the child it invokes.
 */

const CART = `import { assign, sendParent, sendTo, setup } from "xstate";

const payment = setup({}).createMachine({
  id: "payment",
  initial: "charging",
  states: {
    charging: { on: { PAID: "paid" } },
    paid: { type: "final", entry: sendParent({ type: "RECEIPT" }) },
  },
});

export const cartMachine = setup({ actors: { payment } }).createMachine({
  id: "cart",
  initial: "empty",
  context: { items: 0, receipt: false },
  states: {
    empty: { on: { ADD: { target: "full", actions: assign({ items: ({ context }) => context.items + 1 }) } } },
    full: {
      on: {
        ADD: { actions: assign({ items: ({ context }) => context.items + 1 }) },
        CHECKOUT: "checkingOut",
      },
    },
    checkingOut: {
      invoke: { id: "payment", src: "payment", onDone: "paid" },
      on: {
        PAY: { actions: sendTo("payment", { type: "PAID" }) },
        RECEIPT: { actions: assign({ receipt: true }) },
      },
    },
    paid: { type: "final" },
  },
});
`;

const main = (inspectorPort: number) => `import { createWebSocketInspector } from "@statelyai/inspect";
import { createActor } from "xstate";
import { cartMachine } from "./cart.js";

const inspector = createWebSocketInspector({ url: "ws://127.0.0.1:${inspectorPort}/?app=shop" });
const actor = createActor(cartMachine, { inspect: inspector.inspect }).start();

const show = (snapshot) => {
  document.getElementById("state").textContent = JSON.stringify(snapshot.value) + " " + snapshot.context.items;
};
show(actor.getSnapshot());
actor.subscribe(show);
for (const type of ["ADD", "CHECKOUT", "PAY"]) {
  document.getElementById(type).addEventListener("click", () => actor.send({ type }));
}
`;

const INDEX = `<!doctype html>
<html><head><meta charset="utf-8"><title>shop</title><link rel="icon" href="data:,"></head>
<body>
  <p id="state">loading</p>
  <button id="ADD">add</button> <button id="CHECKOUT">checkout</button> <button id="PAY">pay</button>
  <script type="module" src="/src/main.js"></script>
</body></html>
`;

/**
 * @statelyai/inspect sends each inspection event from the page in a requestIdleCallback. Headless Chromium on this
 * loaded machine sometimes gives the app's tab no idle period for tens of seconds; a deadline on those callbacks
 * (what a visible tab of an idle browser gets anyway) keeps the test from depending on the scheduler. The events,
 * their order and their content are the library's own.
 */
async function idleSoon(app: Page): Promise<void> {
  await app.addInitScript(() => {
    const idle = window.requestIdleCallback.bind(window);
    window.requestIdleCallback = (callback, options) => idle(callback, { timeout: 200, ...options });
  });
}

let dir: string;
let vite: ViteDevServer;
let vitePort: number;
let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  dir = tempDir("statecraft-vite-app-");
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "shop", private: true, type: "module" }));
  writeFileSync(join(dir, "index.html"), INDEX);
  writeFileSync(join(dir, "src", "cart.js"), CART);
  // The app's packages are this repository's (xstate, @statelyai/inspect), as an `npm install` would give it.
  const modules = realpathSync(join(import.meta.dirname, "../../node_modules"));
  symlinkSync(modules, join(dir, "node_modules"), "dir");
  vite = await createServer({
    root: dir,
    configFile: false,
    logLevel: "error",
    // Vite's dependency cache goes in the temp folder, never into the shared node_modules.
    cacheDir: join(dir, ".vite"),
    // Bundled before the page asks for them: a dependency found late would make Vite reload the page mid-test.
    optimizeDeps: { include: ["xstate", "@statelyai/inspect"] },
    server: { host: "127.0.0.1", port: 0, strictPort: true, hmr: false, fs: { allow: [dir, modules] } },
  });
  await vite.listen();
  vitePort = (vite.httpServer!.address() as AddressInfo).port;
  inspector = await startInspector({ allowOrigins: [`http://localhost:${vitePort}`] });
  writeFileSync(join(dir, "src", "main.js"), main(inspector.port));
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  await vite?.close();
  if (dir) removeDir(dir);
});

describeWithBrowser("inspector: an XState app served by a Vite dev server", () => {
  it("lists the app's actors as a tree, draws its chart, follows it and shows the events between parent and child", async () => {
    const { page } = browser;
    await page.goto(inspector.url);
    await expect.poll(() => page.locator("#connection").getAttribute("data-connection"), WAIT).toBe("connected");

    const app = await browser.context.newPage();
    await idleSoon(app);
    await app.goto(`http://localhost:${vitePort}/`);
    await expect.poll(() => app.locator("#state").textContent(), WAIT).toBe('"empty" 0');

    const picker = page.getByRole("combobox", { name: "session" });
    const cartLabel = new RegExp(`^shop \\(client \\d+, http://localhost:${vitePort}\\) · cart · x:0 \\(live\\)$`);
    await expect.poll(() => picker.locator("option").allTextContents(), WAIT).toEqual([expect.stringMatching(cartLabel)]);
    await expect.poll(() => page.locator("#chart").getAttribute("data-layout"), WAIT).toBe("done");
    const states = await page.locator("#chart [data-state]").evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
    expect(states.sort()).toEqual(["checkingOut", "empty", "full", "paid"]);
    await expect.poll(() => page.locator('#chart [data-state][aria-current="true"]').getAttribute("data-state"), WAIT).toBe("empty");

    // Driven through the app's own buttons: the chart follows each step.
    await app.getByRole("button", { name: "add" }).click();
    await expect.poll(() => app.locator("#state").textContent(), WAIT).toBe('"full" 1');
    await expect.poll(() => page.locator('#chart [data-state][aria-current="true"]').getAttribute("data-state"), WAIT).toBe("full");
    await app.getByRole("button", { name: "add" }).click();
    await expect.poll(() => page.getByTestId("selected").getAttribute("data-seq"), WAIT).toBe("2");
    await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"items": 2');
    await app.getByRole("button", { name: "checkout" }).click();
    await expect.poll(() => page.locator('#chart [data-state][aria-current="true"]').getAttribute("data-state"), WAIT).toBe("checkingOut");

    // The invoked payment machine is listed under the cart, with its own chart.
    await expect.poll(() => picker.locator("option").allTextContents(), WAIT).toEqual([expect.stringMatching(cartLabel), expect.stringMatching(/^↳ payment · x:1 \(live\)$/)]);
    const child = picker.locator("option").nth(1);
    expect(await child.getAttribute("data-depth")).toBe("1");
    expect(await child.getAttribute("data-parent")).toBe(await picker.locator("option").first().getAttribute("value"));

    await app.getByRole("button", { name: "pay" }).click();
    await expect.poll(() => app.locator("#state").textContent(), WAIT).toBe('"paid" 2');
    await expect.poll(() => page.locator('#chart [data-state][aria-current="true"]').getAttribute("data-state"), WAIT).toBe("paid");
    // The arrow of the invoke's onDone is the one taken into paid.
    await expect
      .poll(() => page.locator("#chart path[data-edge][data-taken]").evaluateAll((els) => els.map((e) => `${e.getAttribute("data-from")}→${e.getAttribute("data-to")}:${e.getAttribute("data-kind")}`)), WAIT)
      .toContain("checkingOut→paid:done");

    // The events between the cart and the payment machine, in order: from outside (the buttons), sendTo, sendParent,
    // and the child's done event.
    const events = page.getByRole("listbox", { name: "events" }).getByRole("option");
    const expected = [
      ["(outside)", "x:0", "xstate.init"],
      ["(outside)", "x:0", "ADD"],
      ["(outside)", "x:0", "ADD"],
      ["(outside)", "x:0", "CHECKOUT"],
      ["x:0", "x:1", "xstate.init"],
      ["(outside)", "x:0", "PAY"],
      ["x:0", "x:1", "PAID"],
      ["x:1", "x:0", "RECEIPT"],
      ["x:1", "x:0", "xstate.done.actor.payment"],
    ];
    const rows = () =>
      events.evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.from, (e as HTMLElement).dataset.to, (e as HTMLElement).dataset.type]));
    // Session ids are the app's own, under its client's number (ws2/x:0).
    const unprefixed = (id: string | undefined) => String(id).replace(/^ws\d+\//, "");
    await expect.poll(async () => (await rows()).map(([from, to, type]) => [unprefixed(from), unprefixed(to), String(type)]), WAIT).toEqual(expected);
    // Selecting PAID, sent to the payment machine, shows the payment machine before (charging) and after (paid) it.
    await events.nth(6).click();
    const detail = page.getByRole("region", { name: "selected event" });
    await expect.poll(() => detail.locator(".before").textContent(), WAIT).toContain('"state": "charging"');
    await expect.poll(() => detail.locator(".after").textContent(), WAIT).toContain('"state": "paid"');
    await screenshot(page, "vite-app");

    // The app's tab closes: its actors are no longer live.
    await app.close();
    await expect.poll(() => picker.locator("option").allTextContents(), WAIT).toEqual([expect.not.stringContaining("(live)"), expect.not.stringContaining("(live)")]);
  });

  it("refuses the same app served on an origin not allowed (127.0.0.1 instead of localhost); the app runs on", async () => {
    const { page } = browser;
    const before = await page.getByRole("combobox", { name: "session" }).locator("option").count();
    const app = await browser.context.newPage();
    const refused = new Promise<void>((resolve) => {
      app.on("websocket", (ws) => {
        if (!ws.url().includes(`:${inspector.port}`)) return;
        ws.on("socketerror", () => resolve());
        ws.on("close", () => resolve());
      });
    });
    await idleSoon(app);
    await app.goto(`http://127.0.0.1:${vitePort}/`);
    await refused;
    // Never break the app: it still works without its inspector.
    await app.getByRole("button", { name: "add" }).click();
    await expect.poll(() => app.locator("#state").textContent(), WAIT).toBe('"full" 1');
    expect(await page.getByRole("combobox", { name: "session" }).locator("option").count()).toBe(before);
    expect(await page.getByRole("combobox", { name: "session" }).locator("option").allTextContents()).not.toContainEqual(expect.stringContaining(`127.0.0.1:${vitePort}`));
    await app.close();
  });

  it("the inspector's page made no request outside 127.0.0.1 and raised no error", () => {
    // The app's pages are on the dev server (another origin) by design; the inspector's page requests only its own.
    const inspectorRequests = browser.requests.filter((url) => !url.includes(`:${vitePort}`));
    expect(foreignRequests(inspectorRequests)).toEqual([]);
    // The refused app's WebSocket logs a failed connection in its own tab; nothing else may fail.
    expect(browser.errors.filter((e) => !e.includes("WebSocket"))).toEqual([]);
  });
});
