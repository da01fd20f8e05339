import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { createRequire } from "node:module";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir, tempDir } from "../support/engine.js";

const root = join(import.meta.dirname, "..", "..");
const vitest = join(createRequire(import.meta.url).resolve("vitest/package.json"), "..", "vitest.mjs");
/** One browser test file and one statecraft/dbos test file: enough to see each part skip or fail, cheap to run. */
const FILES = ["test/e2e/inspect-morph.test.ts", "test/dbos/follow-lines.test.ts"];
const nowhere = tempDir("statecraft-no-chromium-");
afterAll(() => removeDir(nowhere));

/** The suite's own set-up and two of its files, in a child vitest, on a machine with neither Chromium nor PostgreSQL. */
function runWithoutParts(ci: boolean): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = {};
  // The child is a run of its own: none of this worker's vitest variables, and CI only when asked.
  for (const [key, value] of Object.entries(process.env)) if (!/^(VITEST|TEST$|CI$|STATECRAFT_TEST_DATABASE_URL$)/.test(key)) env[key] = value;
  env.STATECRAFT_CHROMIUM = join(nowhere, "chromium");
  env.NO_COLOR = "1";
  if (ci) env.CI = "true";
  const child = spawnSync(process.execPath, [vitest, "run", ...FILES], { cwd: root, env, encoding: "utf8", timeout: 170_000 });
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe("npm test on a machine without Chromium or PostgreSQL", () => {
  it("outside CI: the browser and statecraft/dbos tests skip, each part said once in one loud line naming what to install", () => {
    const { status, output } = runWithoutParts(false);
    expect(status, output).toBe(0);
    expect(count(output, "*** SKIPPING the browser tests: no Chromium at"), output).toBe(1);
    expect(output).toContain(`no Chromium at ${join(nowhere, "chromium")}: install it (Debian: apt-get install chromium) or set STATECRAFT_CHROMIUM`);
    expect(count(output, "*** SKIPPING the statecraft/dbos tests: STATECRAFT_TEST_DATABASE_URL is not set"), output).toBe(1);
    expect(output).toContain("apt-get install postgresql");
    expect(output).toMatch(/Test Files\s+2 skipped \(2\)/);
    expect(output).not.toMatch(/failed/i);
  }, 180_000);

  it("in CI (CI=true): the run fails before any test, naming both missing parts", () => {
    const { status, output } = runWithoutParts(true);
    expect(status, output).not.toBe(0);
    expect(output).toContain("CI is set, and these tests cannot run");
    expect(output).toContain(`the browser tests: no Chromium at ${join(nowhere, "chromium")}`);
    expect(output).toContain("the statecraft/dbos tests: STATECRAFT_TEST_DATABASE_URL is not set");
    // Nothing ran: the set-up stopped the run before collecting a file.
    expect(output).not.toMatch(/Tests\s+\d+ (passed|skipped)/);
  }, 180_000);
});
