import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/**
 * A statecraft folder of its own (`STATECRAFT_HOME`: the session key, the user's config) for each test of the file
 * that calls this, removed and the previous value put back after it. Returns the current test's folder.
 */
export function useTempHome(prefix = "statecraft-home-"): () => string {
  let home = "";
  let saved: string | undefined;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), prefix));
    saved = process.env.STATECRAFT_HOME;
    process.env.STATECRAFT_HOME = home;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.STATECRAFT_HOME;
    else process.env.STATECRAFT_HOME = saved;
    rmSync(home, { recursive: true, force: true });
  });
  return () => home;
}
