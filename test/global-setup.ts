import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds dist/ before the suite when src/ changed since the last build: tests that spawn the CLI or import the
 * package by its name use the built package, exactly as a user gets it.
 */
export default function setup(): () => void {
  const built = join(root, "dist", "index.js");
  if (!existsSync(built) || statSync(built).mtimeMs < newestMtime(join(root, "src"))) {
    execFileSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" });
  }
  // The statecraft folder (the key that signs session rules) of the whole suite, its workers and the CLIs they
  // start: a temp folder, never the user's ~/.config/statecraft.
  const home = mkdtempSync(join(tmpdir(), "statecraft-home-"));
  process.env.STATECRAFT_HOME = home;
  return () => rmSync(home, { recursive: true, force: true });
}
