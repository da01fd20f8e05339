import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { describe, inject } from "vitest";
import { startInspector, type Inspector } from "../../../src/inspect/server.js";

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

/** Whether this run has a Chromium (test/setup/chromium.ts launched it); without one the browser tests skip. */
export function browserAvailable(): boolean {
  return inject("chromiumEndpoint") !== null;
}

/** A describe block of browser tests: skipped, with the rest of its file's hooks, when the run has no Chromium. */
export function describeWithBrowser(name: string, body: () => void): void {
  (browserAvailable() ? describe : describe.skip)(name, { timeout: BROWSER_TEST_TIMEOUT }, body);
}

/**
 * A fresh context (a profile of its own) in the run's one headless Chromium, with every request it makes recorded so
 * a test can assert none left 127.0.0.1.
 */
export async function openBrowser(): Promise<Browser> {
  const endpoint = inject("chromiumEndpoint");
  if (endpoint === null) throw new Error("this run has no Chromium: declare browser tests with describeWithBrowser so they skip");
  const browser = await chromium.connect(endpoint);
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
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
      // Disconnects this file; the run's Chromium stays up for the next one.
      await browser.close();
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
