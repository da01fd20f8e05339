import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editFileTool, grepTool, listDirTool, readFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { contextFor, makeTempDir, removeDir, run, type RunOutcome } from "./workspace.js";

// Check-then-open: a tool resolves `dir/f.txt` while `dir` is a real folder, then opens it after a second process
// made `dir` a symlink to the outside folder. Whatever the interleaving, nothing outside may be read or changed.
const SWAPPER = fileURLToPath(new URL("../fixtures/processes/swap-folder-and-symlink.mjs", import.meta.url));
const SWAP_MS = 2_000;
const SENTINEL = "SENTINEL-OUTSIDE-CONTENT\n";

let base: string;
let ws: string;
let outside: string;
beforeEach(() => {
  base = makeTempDir("statecraft-race-");
  ws = path.join(base, "workspace");
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(ws, "dir"), { recursive: true });
  fs.writeFileSync(path.join(ws, "dir", "f.txt"), "inside\n");
  fs.mkdirSync(outside);
  // Same name as the file inside, so a read or write that follows the swapped symlink lands on it.
  fs.writeFileSync(path.join(outside, "f.txt"), SENTINEL);
  fs.writeFileSync(path.join(outside, "outside-only.txt"), SENTINEL);
});
afterEach(() => removeDir(base));

/**
 * Starts the swapper and resolves once it is swapping. It swaps for 2 s and then on until `stop()`; `done`
 * resolves with its swap count when it exits.
 */
async function startSwapper(): Promise<{ done: Promise<number>; stop(): void }> {
  const args = [SWAPPER, path.join(ws, "dir"), outside, String(SWAP_MS), path.join(base, "stop")];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  const done = new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      const swaps = /swaps (\d+)/.exec(output);
      if (code !== 0 || !swaps) reject(new Error(`swapper exited with ${code}: ${output}`));
      else resolve(Number(swaps[1]));
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("started")) resolve();
    });
    done.catch(reject);
  });
  return { done, stop: () => fs.writeFileSync(path.join(base, "stop"), "") };
}

describe("a folder swapped for a symlink while tools run (a second process swaps it)", () => {
  it("400 reads and 400 writes (plus edits, listings, greps) during 2 s of swapping: none reaches outside", { timeout: 120_000 }, async () => {
    const sentinelBefore = fs.statSync(path.join(outside, "f.txt"));
    const outcomes: { tool: string; out: RunOutcome }[] = [];
    const thrown: unknown[] = [];
    const attempt = async (tool: string, op: () => Promise<RunOutcome>) => {
      try {
        outcomes.push({ tool, out: await op() });
      } catch (error) {
        thrown.push(error);
      }
    };
    const context = contextFor(ws);
    const swapper = await startSwapper();

    const reads = (async () => {
      for (let i = 0; i < 400; i++) await attempt("read_file", () => run(readFileTool(), { path: "dir/f.txt" }, context));
    })();
    const writes = (async () => {
      for (let i = 0; i < 400; i++) {
        const target = i % 2 === 0 ? "dir/f.txt" : `dir/new-${i}.txt`;
        await attempt("write_file", () => run(writeFileTool(), { path: target, content: `written ${i}\n` }, context));
      }
    })();
    const others = (async () => {
      for (let i = 0; i < 100; i++) {
        await attempt("edit_file", () => run(editFileTool(), { path: "dir/f.txt", old_string: "SENTINEL", new_string: "pwned" }, context));
        await attempt("list_dir", () => run(listDirTool(), { path: "dir" }, context));
        await attempt("grep", () => run(grepTool(), { pattern: "SENTINEL-OUT", path: "dir" }, context));
      }
    })();
    await Promise.all([reads, writes, others]);
    swapper.stop();
    const swaps = await swapper.done;

    expect(thrown.map(String)).toEqual([]);
    expect(swaps).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.tool === "read_file")).toHaveLength(400);
    expect(outcomes.filter((o) => o.tool === "write_file")).toHaveLength(400);
    for (const { tool, out } of outcomes) {
      expect(out.text, tool).not.toContain(SENTINEL.trim());
      expect(out.text, tool).not.toContain("outside-only");
      // A successful edit could only have found "SENTINEL" in the outside file.
      if (tool === "edit_file") expect(out.isError, out.text).toBe(true);
    }
    // The outside folder is exactly as it was: nothing written, truncated, edited or created there.
    expect(fs.readdirSync(outside).sort()).toEqual(["f.txt", "outside-only.txt"]);
    expect(fs.readFileSync(path.join(outside, "f.txt"), "utf8")).toBe(SENTINEL);
    const sentinelAfter = fs.statSync(path.join(outside, "f.txt"));
    expect(sentinelAfter.mtimeMs).toBe(sentinelBefore.mtimeMs);
    expect(sentinelAfter.size).toBe(sentinelBefore.size);
    expect(fs.readFileSync(path.join(outside, "outside-only.txt"), "utf8")).toBe(SENTINEL);
  });
});
