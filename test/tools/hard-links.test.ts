import { resolveSandbox, runSandbox, withRunSandbox } from "../../src/sandbox/index.js";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool, editFileTool, globTool, grepTool, listDirTool, readFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles, type RunOutcome } from "./workspace.js";

// A hard link is the same file under another name: one inside the workspace can be the outside file itself.
let base: string;
let ws: string;
let secret: string;
let secretStat: fs.Stats;
beforeEach(() => {
  base = makeTempDir("statecraft-hardlink-");
  ws = path.join(base, "workspace");
  writeFiles(base, {
    "workspace/inside.txt": "inside\n",
    "workspace/deep/er/keep.txt": "keep\n",
    "outside/secret.txt": "SECRET-CONTENT\n",
  });
  secret = path.join(base, "outside", "secret.txt");
  fs.linkSync(secret, path.join(ws, "hl.txt"));
  fs.linkSync(secret, path.join(ws, "deep", "er", "hl.md"));
  secretStat = fs.statSync(secret);
});
afterEach(() => removeDir(base));

function expectRefused(out: RunOutcome) {
  expect(out.isError, out.text).toBe(true);
  expect(out.text).toContain("hard links");
  expect(out.text).not.toContain("SECRET-CONTENT");
}

function expectSecretUntouched() {
  expect(fs.readFileSync(secret, "utf8")).toBe("SECRET-CONTENT\n");
  const now = fs.statSync(secret);
  expect(now.size).toBe(secretStat.size);
  expect(now.mtimeMs).toBe(secretStat.mtimeMs);
}

describe("hard-linked files are neither read, written, edited nor grepped", () => {
  it("read_file refuses, at any depth and through a symlink to the link", async () => {
    fs.symlinkSync("hl.txt", path.join(ws, "to-hl"));
    for (const p of ["hl.txt", "./hl.txt", "deep/er/hl.md", path.join(ws, "hl.txt"), "to-hl"]) {
      const out = await run(readFileTool(), { path: p }, contextFor(ws));
      expectRefused(out);
      expect(out.text).toContain("has 3 hard links");
    }
  });

  it("write_file refuses without truncating or writing the file", async () => {
    for (const p of ["hl.txt", "deep/er/hl.md"]) {
      expectRefused(await run(writeFileTool(), { path: p, content: "pwned\n" }, contextFor(ws)));
      expectRefused(await run(writeFileTool(), { path: p, content: "" }, contextFor(ws)));
    }
    expectSecretUntouched();
  });

  it("edit_file refuses", async () => {
    expectRefused(await run(editFileTool(), { path: "hl.txt", old_string: "SECRET", new_string: "pwned" }, contextFor(ws)));
    expectRefused(await run(editFileTool(), { path: "deep/er/hl.md", old_string: "SECRET-CONTENT", new_string: "x", replace_all: true }, contextFor(ws)));
    expectSecretUntouched();
  });

  it("grep skips them, searching a folder, a glob or the file itself, and says so", async () => {
    for (const input of [{ pattern: "SECRET" }, { pattern: "SECRET", glob: "*.md" }, { pattern: "SECRET", path: "deep" }, { pattern: "SECRET", path: "hl.txt" }]) {
      const out = await run(grepTool(), input, contextFor(ws));
      expect(out.text).not.toContain("SECRET-CONTENT");
      expect(out.text).toMatch(/No matches for \/SECRET\/ in .*\n\[skipped \d hard-linked files? \(another link may be outside the workspace\)\]$/);
    }
    const out = await run(grepTool(), { pattern: "SECRET|inside|keep" }, contextFor(ws));
    expect(out.text).toBe(["deep/er/keep.txt:1:keep", "inside.txt:1:inside", "[skipped 2 hard-linked files (another link may be outside the workspace)]"].join("\n"));
  });

  it("a file inside linked from outside is refused too: writing it would change the outside name", async () => {
    const outsideName = path.join(base, "outside", "copy-of-inside.txt");
    fs.linkSync(path.join(ws, "inside.txt"), outsideName);
    expectRefused(await run(writeFileTool(), { path: "inside.txt", content: "changed\n" }, contextFor(ws)));
    expectRefused(await run(editFileTool(), { path: "inside.txt", old_string: "inside", new_string: "changed" }, contextFor(ws)));
    expect(fs.readFileSync(outsideName, "utf8")).toBe("inside\n");
  });

  it("a hard link created by bash during the run is refused at the next call", async () => {
    expect((await run(readFileTool(), { path: "inside.txt" }, contextFor(ws))).text).toBe("     1\tinside");
    // Unsandboxed: inside the sandbox ../outside is not there to link (test/sandbox/ shows that); here the file tools
    // must hold on their own.
    const unsandboxed = runSandbox(resolveSandbox("off"), ws, () => undefined);
    const made = await withRunSandbox(unsandboxed, () => run(bashTool(), { command: "ln ../outside/secret.txt planted.txt && ln ../outside/secret.txt inside2.txt" }, contextFor(ws)));
    expect(made.isError, made.text).toBe(false);
    expectRefused(await run(readFileTool(), { path: "planted.txt" }, contextFor(ws)));
    expectRefused(await run(writeFileTool(), { path: "planted.txt", content: "x" }, contextFor(ws)));
    expectRefused(await run(editFileTool(), { path: "inside2.txt", old_string: "SECRET", new_string: "x" }, contextFor(ws)));
    const grep = await run(grepTool(), { pattern: "SECRET" }, contextFor(ws));
    expect(grep.text).not.toContain("SECRET-CONTENT");
    expect(grep.text).toContain("[skipped 4 hard-linked files");
    expectSecretUntouched();
  });

  it("files with one link, and folders (which always have several), still work", async () => {
    expect((await run(listDirTool(), { path: "deep" }, contextFor(ws))).text).toBe("er/");
    expect((await run(globTool(), { pattern: "**/*.md" }, contextFor(ws))).text).toBe("deep/er/hl.md");
    fs.unlinkSync(path.join(ws, "hl.txt"));
    fs.unlinkSync(path.join(ws, "deep", "er", "hl.md"));
    // The outside file is back to one link; a fresh copy inside is a separate file.
    fs.copyFileSync(secret, path.join(ws, "copy.txt"));
    const out = await run(editFileTool(), { path: "copy.txt", old_string: "SECRET", new_string: "PUBLIC" }, contextFor(ws));
    expect(out.isError, out.text).toBe(false);
    expect(fs.readFileSync(path.join(ws, "copy.txt"), "utf8")).toBe("PUBLIC-CONTENT\n");
    expect((await run(writeFileTool(), { path: "copy.txt", content: "short" }, contextFor(ws))).text).toBe("Overwrote copy.txt (5 bytes, 1 line).");
    expect(fs.readFileSync(path.join(ws, "copy.txt"), "utf8")).toBe("short");
    expectSecretUntouched();
  });
});
