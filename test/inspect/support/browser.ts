import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { startInspector, type Inspector } from "../../../src/inspect/server.js";

export const CHROMIUM = "/usr/bin/chromium";

/** Where screenshots of each view are kept (gitignored). */
export const ARTIFACTS = join(process.cwd(), "test-artifacts", "inspector");

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL the browser requested (pages, assets, fetches, WebSocket handshakes), in order. */
  requests: string[];
  /** Messages the page logged as errors, and errors it threw. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * Debian's Chromium, headless, with a fresh profile in a temp dir, and with every request it makes recorded so a
 * test can assert none left 127.0.0.1.
 */
export async function openBrowser(): Promise<Browser> {
  const userDataDir = mkdtempSync(join(tmpdir(), "statecraft-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    viewport: { width: 1440, height: 1000 },
  });
  const requests: string[] = [];
  const errors: string[] = [];
  context.on("request", (request) => requests.push(request.url()));
  const watch = (page: Page) => {
    page.on("websocket", (ws) => requests.push(ws.url()));
    page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`console: ${message.text()}`);
    });
  };
  context.on("page", watch);
  const page = context.pages()[0] ?? (await context.newPage());
  watch(page);
  return {
    context,
    page,
    requests,
    errors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Requests that went anywhere but 127.0.0.1 (data: and about: URLs are not requests to anyone). */
export function foreignRequests(requests: readonly string[]): string[] {
  return requests.filter((url) => {
    if (url.startsWith("data:") || url.startsWith("about:") || url.startsWith("blob:")) return false;
    try {
      return new URL(url).hostname !== "127.0.0.1";
    } catch {
      return true;
    }
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Polling for what the page shows: generous, since a loaded machine may take seconds to lay out a chart. */
export const WAIT = { timeout: 30_000, interval: 50 };

/** Per-test time limit of browser tests. */
export const BROWSER_TEST_TIMEOUT = 180_000;

/** A fresh inspector and a browser page showing it, connected: what most inspector e2e files start from. */
export async function openInspectorPage(): Promise<{ inspector: Inspector; browser: Browser }> {
  const inspector = await startInspector();
  const browser = await openBrowser();
  await browser.page.goto(inspector.url);
  await browser.page.locator('#connection[data-connection="connected"]').waitFor({ timeout: WAIT.timeout });
  return { inspector, browser };
}

export async function closeInspectorPage(page: { inspector?: Inspector; browser?: Browser }): Promise<void> {
  await page.browser?.close();
  await page.inspector?.close();
}
