import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";
import { chromiumPath, missingParts, reportMissing } from "../support/optional-parts.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The WebSocket endpoint of the run's one Chromium, or null when the browser tests skip. */
    chromiumEndpoint: string | null;
  }
}

/** Flags for a headless Chromium that asks nothing of the network or the desktop. */
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"];

/**
 * Once per run: says which optional part is missing (or, in CI, fails the run), and launches one headless Chromium
 * that every browser test file connects to and opens a fresh context in, instead of starting a browser per file.
 * The statecraft/dbos tests read STATECRAFT_TEST_DATABASE_URL themselves (test/dbos/support.ts).
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const missing = missingParts();
  reportMissing(missing);
  if (missing.some((m) => m.part === "chromium")) {
    project.provide("chromiumEndpoint", null);
    return undefined;
  }
  const path = chromiumPath();
  const server = await chromium.launchServer({ executablePath: path, headless: true, args: ARGS }).catch((error: unknown) => {
    throw new Error(`Chromium at ${path} did not start (${String(error)}): fix it or set STATECRAFT_CHROMIUM to a working one`);
  });
  project.provide("chromiumEndpoint", server.wsEndpoint());
  return () => server.close();
}
