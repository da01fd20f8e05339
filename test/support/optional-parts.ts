import { accessSync, constants } from "node:fs";

/**
 * The suite's two optional parts: Chromium (the inspector's browser tests) and PostgreSQL (the statecraft/dbos tests).
 * Outside CI a missing part skips its tests with one line saying what to install; in CI (`CI=true`) it fails the run.
 * This file decides; test/setup/optional-parts.ts acts on the decision once per run.
 */

/** Where the browser tests look for Chromium unless STATECRAFT_CHROMIUM names another binary. */
export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** Whether this run is CI's: CI set to anything but "", "0" or "false" (as CI services set it). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

/** The Chromium binary the browser tests drive: STATECRAFT_CHROMIUM, else Debian's. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.STATECRAFT_CHROMIUM?.trim();
  return chosen ? chosen : DEFAULT_CHROMIUM;
}

/** Why the browser tests cannot run here (no executable Chromium at `path`), or undefined when they can. */
export function chromiumMissing(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch {
    return `no Chromium at ${path}: install it (Debian: apt-get install chromium) or set STATECRAFT_CHROMIUM to its path`;
  }
}

/** Why the statecraft/dbos tests cannot run here (no STATECRAFT_TEST_DATABASE_URL), or undefined when they can. */
export function databaseMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.STATECRAFT_TEST_DATABASE_URL?.trim()) return undefined;
  return 'STATECRAFT_TEST_DATABASE_URL is not set: install PostgreSQL\'s server (Debian: apt-get install postgresql) and run eval "$(scripts/postgres.sh start)"';
}

/** A part this run lacks: which tests it takes away and why. */
export interface MissingPart {
  part: "chromium" | "postgresql";
  tests: string;
  reason: string;
}

/** The optional parts this machine lacks, browser first. */
export function missingParts(env: NodeJS.ProcessEnv = process.env): MissingPart[] {
  const parts: MissingPart[] = [];
  const browser = chromiumMissing(chromiumPath(env));
  if (browser) parts.push({ part: "chromium", tests: "browser tests", reason: browser });
  const database = databaseMissing(env);
  if (database) parts.push({ part: "postgresql", tests: "statecraft/dbos tests", reason: database });
  return parts;
}

/**
 * Acts on the missing parts: in CI an error naming each (the run fails before any test), elsewhere one loud line
 * for each on stderr (their tests skip).
 */
export function reportMissing(parts: readonly MissingPart[], env: NodeJS.ProcessEnv = process.env): void {
  if (parts.length === 0) return;
  if (inCi(env)) {
    throw new Error(`CI is set, and these tests cannot run: ${parts.map((p) => `the ${p.tests}: ${p.reason}`).join("; ")}`);
  }
  for (const part of parts) process.stderr.write(`\n*** SKIPPING the ${part.tests}: ${part.reason} (with CI=true they fail instead) ***\n`);
  process.stderr.write("\n");
}
