import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const script = join(root, "scripts", "release-check.mjs");
const work = mkdtempSync(join(tmpdir(), "statecraft-release-check-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the check on a package.json with these fields. */
function check(fields: Record<string, unknown>): { status: number | null; stderr: string; stdout: string } {
  const file = join(work, `package-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ name: "statecraft", version: "0.1.0", ...fields }));
  const result = spawnSync(process.execPath, [script, file], { encoding: "utf8" });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe("the release check run by prepack", () => {
  it("is what prepack runs, before the build", () => {
    const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(scripts.prepack).toBe("node scripts/release-check.mjs && node scripts/build.mjs");
  });

  it("warns on stderr, naming each missing field and where to read how to set it, and does not fail", () => {
    const result = check({ homepage: "https://example.org/statecraft" });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('package.json has no "repository", "bugs"; set them before publishing (docs/releasing.md)');
    expect(result.stderr).not.toContain("homepage");
  });

  it("treats an empty value or an object without a url as missing", () => {
    const result = check({ repository: { type: "git" }, homepage: " ", bugs: { url: "https://example.org/issues" } });
    expect(result.stderr).toContain('package.json has no "repository", "homepage"; set them');
  });

  it("says nothing when all three are set (bugs may be an email only)", () => {
    const result = check({ repository: "git+https://example.org/statecraft.git", homepage: "https://example.org/statecraft", bugs: { email: "bugs@example.org" } });
    expect(result).toEqual({ status: 0, stderr: "", stdout: "" });
  });
});
