import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, tempDir } from "../support/engine.js";

const dist = pathToFileURL(join(import.meta.dirname, "..", "..", "dist", "index.js")).href;

// One run whose transcript is signed: its first line needs the session key, which the first of these processes makes.
const PROGRAM = `
import { query, scriptedModel } from ${JSON.stringify(dist)};
const run = query("hi", { model: scriptedModel([{ text: "Hello." }]), cwd: process.argv[2] });
for await (const _event of run);
const result = await run.result;
console.log(result.reason);
`;

let dirs: string[] = [];
beforeEach(() => {
  dirs = [];
});
afterEach(() => dirs.forEach(removeDir));

function runIn(cwd: string, home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ["--input-type=module", "-e", PROGRAM, cwd], { timeout: 60_000, env: { ...process.env, STATECRAFT_HOME: home } }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe("the session key, made by several processes at once", () => {
  it("is made once, whole: every process signs with it and none finds it damaged or half-written", async () => {
    const home = tempDir("statecraft-key-home-");
    dirs.push(home);
    const cwds = Array.from({ length: 8 }, () => tempDir("statecraft-key-run-"));
    dirs.push(...cwds);
    const results = await Promise.all(cwds.map((cwd) => runIn(cwd, home)));
    for (const result of results) {
      expect(result.stderr).not.toMatch(/session key/);
      expect(result.stdout.trim()).toBe("final_answer");
      expect(result.code).toBe(0);
    }
    // One key, no file of a process's own left beside it.
    expect(readdirSync(home)).toEqual(["session-key"]);
    expect(readFileSync(join(home, "session-key"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
  });
});
