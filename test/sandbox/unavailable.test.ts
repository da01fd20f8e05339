import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sandboxSupport } from "../../src/sandbox/index.js";
import { runCommands, tempDir } from "./support.js";

// A machine without bubblewrap: PATH names no folder holding it (the commands below name their programs in full).
let ws: string;
let savedPath: string | undefined;
beforeEach(() => {
  ws = tempDir("statecraft-no-sandbox-");
  savedPath = process.env.PATH;
  process.env.PATH = "/nonexistent-statecraft-path";
  process.env.SANDBOX_TEST_KEY = "sk-LEAK-unavailable";
});
afterEach(() => {
  process.env.PATH = savedPath;
  delete process.env.SANDBOX_TEST_KEY;
  fs.rmSync(ws, { recursive: true, force: true });
});

function capturedLogger() {
  const lines: Array<{ msg: string }> = [];
  const logger = pino({ level: "warn" }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { logger, lines };
}

describe("where no sandbox can be made", () => {
  it("finds bubblewrap missing and says how to install it", () => {
    const support = sandboxSupport();
    expect(support.kind).toBe("none");
    expect(support.kind === "none" && support.fix).toContain("apt-get install bubblewrap");
  });

  it('"required" starts no process: the call fails SANDBOX_UNAVAILABLE with the fix', async () => {
    const results = await runCommands(ws, ["/usr/bin/touch ran-1.txt", "/usr/bin/touch ran-2.txt"], { sandbox: "required" });
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(result.content).toContain('sandbox "required" but bubblewrap (bwrap) is not installed; the process was not started. Fix: install it: apt-get install bubblewrap');
    }
    // The code is the error's, recorded with each call.
    const trace = fs.readFileSync(path.join(ws, ".agent", "trace.jsonl"), "utf8");
    expect(trace).toContain('"code":"SANDBOX_UNAVAILABLE"');
    expect(trace).not.toMatch(/"code":"TOOL_FAILED"/);
    expect(fs.existsSync(path.join(ws, "ran-1.txt"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "ran-2.txt"))).toBe(false);
  });

  it('"auto" runs the commands unsandboxed, environment still scrubbed, and warns once per run', async () => {
    const { logger, lines } = capturedLogger();
    const results = await runCommands(ws, ["/usr/bin/env", "/usr/bin/touch ran.txt", "/usr/bin/true"], { logger: logger as never });
    expect(results.map((r) => r.isError)).toEqual([false, false, false]);
    expect(fs.existsSync(path.join(ws, "ran.txt"))).toBe(true);
    expect(results[0].content).not.toContain("LEAK");
    const warnings = lines.filter((l) => l.msg.includes("not sandboxed"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].msg).toContain("processes of this run are not sandboxed: bubblewrap (bwrap) is not installed. Fix: install it: apt-get install bubblewrap");
    // A second run warns again, once.
    await runCommands(ws, ["/usr/bin/true", "/usr/bin/true"], { logger: logger as never });
    expect(lines.filter((l) => l.msg.includes("not sandboxed"))).toHaveLength(2);
  });
});
