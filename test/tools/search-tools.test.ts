import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { globTool, grepTool } from "../../src/tools/builtin/index.js";
import { MAX_GREP_MATCHES } from "../../src/tools/builtin/grep.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles } from "./workspace.js";

let ws: string;
beforeEach(() => {
  ws = makeTempDir();
  writeFiles(ws, {
    ".gitignore": "node_modules/\n*.log\ndist\n",
    "src/a.ts": "export const alpha = 1;\n// TODO: beta\n",
    "src/b.ts": "export function Beta() {}\n",
    "src/nested/c.ts": "const gamma = 'todo later';\n",
    "src/nested/.gitignore": "generated.ts\n",
    "src/nested/generated.ts": "TODO generated\n",
    "src/readme.md": "TODO docs\n",
    "node_modules/pkg/index.ts": "TODO in deps\n",
    "dist/out.ts": "TODO built\n",
    "debug.log": "TODO log\n",
    ".github/workflow.yml": "on: push # TODO\n",
    "image.bin": Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]),
  });
  fs.mkdirSync(path.join(ws, ".git"));
  fs.writeFileSync(path.join(ws, ".git", "HEAD"), "TODO ref\n");
});
afterEach(() => removeDir(ws));

describe("glob", () => {
  it("finds files by pattern, respecting .gitignore files at every level and skipping .git", async () => {
    const out = await run(globTool(), { pattern: "**/*.ts" }, contextFor(ws));
    expect(out).toEqual({ isError: false, text: ["src/a.ts", "src/b.ts", "src/nested/c.ts"].join("\n") });
  });

  it("includes dot files and folders that are not ignored", async () => {
    const out = await run(globTool(), { pattern: "**/*.yml" }, contextFor(ws));
    expect(out.text).toBe(".github/workflow.yml");
    const all = await run(globTool(), { pattern: "**/*" }, contextFor(ws));
    expect(all.text.split("\n")).not.toContain(".git/HEAD");
    expect(all.text.split("\n")).toContain(".gitignore");
  });

  it("searches under path, returning paths relative to the workspace", async () => {
    const out = await run(globTool(), { pattern: "*.ts", path: "src/nested" }, contextFor(ws));
    expect(out.text).toBe("src/nested/c.ts");
  });

  it("searches an ignored folder asked for by name", async () => {
    const out = await run(globTool(), { pattern: "**/*.ts", path: "node_modules" }, contextFor(ws));
    expect(out.text).toBe("node_modules/pkg/index.ts");
    const grep = await run(grepTool(), { pattern: "TODO", path: "node_modules/pkg" }, contextFor(ws));
    expect(grep.text).toBe("node_modules/pkg/index.ts:1:TODO in deps");
  });

  it("says when nothing matches (not an error)", async () => {
    expect(await run(globTool(), { pattern: "**/*.rs" }, contextFor(ws))).toEqual({ isError: false, text: "No files match **/*.rs in .." });
  });

  it("refuses patterns that leave the search folder", async () => {
    const up = await run(globTool(), { pattern: "../**/*" }, contextFor(ws));
    expect(up.isError).toBe(true);
    expect(up.text).toContain('contains ".."');
    const abs = await run(globTool(), { pattern: "/etc/*" }, contextFor(ws));
    expect(abs.isError).toBe(true);
    expect(abs.text).toContain("is absolute");
  });

  it("does not descend into a symlinked folder pointing outside", async () => {
    const outside = makeTempDir("statecraft-outside-");
    try {
      writeFiles(outside, { "secret.ts": "" });
      fs.symlinkSync(outside, path.join(ws, "src", "linked"));
      const out = await run(globTool(), { pattern: "**/secret.ts" }, contextFor(ws));
      expect(out.text).toBe("No files match **/secret.ts in ..");
    } finally {
      removeDir(outside);
    }
  });

  it("refuses a file as path", async () => {
    const out = await run(globTool(), { pattern: "*", path: "src/a.ts" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toContain("is a file, not a folder");
  });
});

describe("grep", () => {
  it("returns file:line:text for matches, skipping ignored, binary files and .git", async () => {
    const out = await run(grepTool(), { pattern: "TODO" }, contextFor(ws));
    expect(out.isError).toBe(false);
    expect(out.text).toBe(
      [".github/workflow.yml:1:on: push # TODO", "src/a.ts:2:// TODO: beta", "src/readme.md:1:TODO docs", "[skipped 1 binary file]"].join("\n"),
    );
  });

  it("supports (?i) for case-insensitive search", async () => {
    const out = await run(grepTool(), { pattern: "(?i)todo", path: "src" }, contextFor(ws));
    expect(out.text.split("\n")).toEqual(["src/a.ts:2:// TODO: beta", "src/nested/c.ts:1:const gamma = 'todo later';", "src/readme.md:1:TODO docs"]);
  });

  it("filters files with glob: by name at any depth, or by path", async () => {
    const byName = await run(grepTool(), { pattern: "(?i)todo|beta", glob: "*.ts" }, contextFor(ws));
    expect(byName.text.split("\n")).toEqual(["src/a.ts:2:// TODO: beta", "src/b.ts:1:export function Beta() {}", "src/nested/c.ts:1:const gamma = 'todo later';"]);
    const byPath = await run(grepTool(), { pattern: "export", glob: "src/*.ts" }, contextFor(ws));
    expect(byPath.text.split("\n")).toEqual(["src/a.ts:1:export const alpha = 1;", "src/b.ts:1:export function Beta() {}"]);
  });

  it("searches a single file given as path", async () => {
    const out = await run(grepTool(), { pattern: "alpha", path: "src/a.ts" }, contextFor(ws));
    expect(out.text).toBe("src/a.ts:1:export const alpha = 1;");
  });

  it("reports an invalid regular expression as an error result", async () => {
    const out = await run(grepTool(), { pattern: "(unclosed" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^pattern is not a valid regular expression: /);
  });

  it("says when nothing matches", async () => {
    const out = await run(grepTool(), { pattern: "zzz_none", path: "src" }, contextFor(ws));
    expect(out).toEqual({ isError: false, text: "No matches for /zzz_none/ in src." });
  });

  it("caps the number of matches and long lines", async () => {
    writeFiles(ws, { "many.txt": Array.from({ length: MAX_GREP_MATCHES + 50 }, (_, i) => `hit ${i}`).join("\n"), "long.txt": `hit ${"y".repeat(1000)}` });
    const out = await run(grepTool(), { pattern: "^hit", glob: "*.txt" }, contextFor(ws));
    const lines = out.text.split("\n");
    expect(lines.filter((line) => /^(long|many)\.txt:\d+:/.test(line))).toHaveLength(MAX_GREP_MATCHES);
    expect(out.text).toContain(`[stopped after ${MAX_GREP_MATCHES} matches; narrow the pattern, path or glob to see the rest]`);
    expect(lines[0]).toBe(`long.txt:1:hit ${"y".repeat(296)}… [line cut]`);
  });

  it("does not follow symlinked files pointing outside the workspace", async () => {
    const outside = makeTempDir("statecraft-outside-");
    try {
      writeFiles(outside, { "secret.txt": "TODO secret" });
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "src", "leak.txt"));
      const out = await run(grepTool(), { pattern: "secret", path: "src" }, contextFor(ws));
      expect(out.text).toBe("No matches for /secret/ in src.");
    } finally {
      removeDir(outside);
    }
  });
});
