import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinTools, editFileTool, globTool, grepTool, listDirTool, readFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { confinePath, resolveRealPath } from "../../src/tools/confine.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles } from "./workspace.js";

let base: string;
let ws: string;
let outside: string;
beforeEach(() => {
  base = makeTempDir("statecraft-confine-");
  ws = path.join(base, "workspace");
  outside = path.join(base, "outside");
  writeFiles(base, { "workspace/inside.txt": "inside\n", "outside/secret.txt": "secret\n" });
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "secret-link"));
  fs.symlinkSync(outside, path.join(ws, "out-dir"));
  fs.symlinkSync("inside.txt", path.join(ws, "inner-link"));
});
afterEach(() => removeDir(base));

function expectRefused(out: { text: string; isError: boolean }) {
  expect(out.isError).toBe(true);
  expect(out.text).toContain("outside the workspace");
  expect(out.text).toContain(`workspace root ${ws}`);
}

describe("resolveRealPath", () => {
  it("follows symlinked parents of files that don't exist yet, and dangling links", () => {
    expect(resolveRealPath(path.join(ws, "out-dir", "new", "file.txt"))).toBe(path.join(outside, "new", "file.txt"));
    fs.symlinkSync(path.join(outside, "not-yet.txt"), path.join(ws, "dangling"));
    expect(resolveRealPath(path.join(ws, "dangling"))).toBe(path.join(outside, "not-yet.txt"));
    expect(resolveRealPath(path.join(ws, "missing", "x"))).toBe(path.join(ws, "missing", "x"));
  });

  it("stops symlink loops", () => {
    fs.symlinkSync("loop-b", path.join(ws, "loop-a"));
    fs.symlinkSync("loop-a", path.join(ws, "loop-b"));
    expect(() => resolveRealPath(path.join(ws, "loop-a", "x"))).toThrow(/too many levels of symbolic links/);
    const confined = confinePath("loop-a/x", { cwd: ws });
    expect(confined.ok).toBe(false);
  });
});

describe("escape attempts are refused with the workspace root named", () => {
  it("../ paths", async () => {
    expectRefused(await run(readFileTool(), { path: "../outside/secret.txt" }, contextFor(ws)));
    expectRefused(await run(writeFileTool(), { path: "../evil.txt", content: "x" }, contextFor(ws)));
    expect(fs.existsSync(path.join(base, "evil.txt"))).toBe(false);
    expectRefused(await run(listDirTool(), { path: ".." }, contextFor(ws)));
    expectRefused(await run(grepTool(), { pattern: "secret", path: "../outside" }, contextFor(ws)));
    expectRefused(await run(globTool(), { pattern: "*", path: "sub/../../outside" }, contextFor(ws)));
  });

  it("absolute paths", async () => {
    expectRefused(await run(readFileTool(), { path: path.join(outside, "secret.txt") }, contextFor(ws)));
    expectRefused(await run(readFileTool(), { path: "/etc/passwd" }, contextFor(ws)));
    expectRefused(await run(editFileTool(), { path: path.join(outside, "secret.txt"), old_string: "secret", new_string: "x" }, contextFor(ws)));
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    // An absolute path inside the workspace is fine.
    const ok = await run(readFileTool(), { path: path.join(ws, "inside.txt") }, contextFor(ws));
    expect(ok).toEqual({ isError: false, text: "     1\tinside" });
  });

  it("a symlinked file pointing out", async () => {
    const out = await run(readFileTool(), { path: "secret-link" }, contextFor(ws));
    expectRefused(out);
    expect(out.text).toContain("through a symbolic link");
    expect(out.text).not.toContain("secret\n");
    expectRefused(await run(writeFileTool(), { path: "secret-link", content: "pwned" }, contextFor(ws)));
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("a symlinked folder pointing out", async () => {
    expectRefused(await run(readFileTool(), { path: "out-dir/secret.txt" }, contextFor(ws)));
    expectRefused(await run(listDirTool(), { path: "out-dir" }, contextFor(ws)));
    expectRefused(await run(grepTool(), { pattern: "secret", path: "out-dir" }, contextFor(ws)));
  });

  it("a new file under a symlinked folder", async () => {
    expectRefused(await run(writeFileTool(), { path: "out-dir/new/created.txt", content: "x" }, contextFor(ws)));
    expect(fs.existsSync(path.join(outside, "new"))).toBe(false);
  });

  it("a dangling symlink pointing out (write would create the target)", async () => {
    fs.symlinkSync(path.join(outside, "planted.txt"), path.join(ws, "dangling"));
    expectRefused(await run(writeFileTool(), { path: "dangling", content: "x" }, contextFor(ws)));
    expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false);
  });

  it("home-relative paths", async () => {
    expectRefused(await run(readFileTool(), { path: "~/.bashrc" }, contextFor(ws)));
  });

  it("every file tool refuses; symlinks staying inside work", async () => {
    for (const tool of builtinTools().filter((t) => t.name !== "bash")) {
      const input: Record<string, unknown> = { path: "../outside/secret.txt", content: "x", old_string: "s", new_string: "t", pattern: "s" };
      const check = tool.validateInput(Object.fromEntries(Object.entries(input).filter(([k]) => k in ((tool.inputSchema.properties as object) ?? {}))));
      expect(check.ok).toBe(true);
      const out = await tool.execute((check as { value: unknown }).value, contextFor(ws));
      expect(typeof out === "object" && out.isError, tool.name).toBe(true);
    }
    expect((await run(readFileTool(), { path: "inner-link" }, contextFor(ws))).text).toBe("     1\tinside");
  });
});

describe("additionalDirectories", () => {
  it("opens extra roots, absolute or relative to the workspace", async () => {
    const abs = readFileTool({ additionalDirectories: [outside] });
    expect((await run(abs, { path: "../outside/secret.txt" }, contextFor(ws))).text).toBe("     1\tsecret");
    const rel = writeFileTool({ additionalDirectories: ["../outside"] });
    const out = await run(rel, { path: "out-dir/made.txt", content: "ok" }, contextFor(ws));
    expect(out.text).toBe(`Created ${path.join(outside, "made.txt")} (2 bytes, 1 line).`);
  });

  it("names the additional directories when refusing", async () => {
    const other = path.join(base, "other");
    fs.mkdirSync(other);
    const out = await run(readFileTool({ additionalDirectories: [other] }), { path: "../outside/secret.txt" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toContain(`and the additional directories ${other}`);
  });

  it("rejects bad options when the tool is made", () => {
    expect(() => readFileTool({ additionalDirectories: "nope" as unknown as string[] })).toThrow(/additionalDirectories must be an array/);
  });
});

describe("the workspace root itself through a symlink", () => {
  it("works when cwd is a symlink to the workspace", async () => {
    const linkedRoot = path.join(base, "ws-link");
    fs.symlinkSync(ws, linkedRoot);
    expect((await run(readFileTool(), { path: "inside.txt" }, contextFor(linkedRoot))).text).toBe("     1\tinside");
    expectRefused(await run(readFileTool(), { path: "secret-link" }, contextFor(linkedRoot)));
  });
});
