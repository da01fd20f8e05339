import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editFileTool, listDirTool, readFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles } from "./workspace.js";

let ws: string;
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => removeDir(ws));

describe("read_file", () => {
  it("returns numbered lines", async () => {
    writeFiles(ws, { "a.txt": "alpha\nbeta\ngamma\n" });
    const out = await run(readFileTool(), { path: "a.txt" }, contextFor(ws));
    expect(out.isError).toBe(false);
    expect(out.text).toBe("     1\talpha\n     2\tbeta\n     3\tgamma");
  });

  it("pages with offset and limit (coerced from strings) and says how to read more", async () => {
    writeFiles(ws, { "n.txt": Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") });
    const out = await run(readFileTool(), { path: "n.txt", offset: "3", limit: "2" }, contextFor(ws));
    expect(out.text).toContain("     3\tline 3\n     4\tline 4");
    expect(out.text).not.toContain("line 5");
    expect(out.text).toContain("[lines 3-4 of 10; use offset 5 to read more]");
  });

  it("cuts at the default limit of 2000 lines", async () => {
    writeFiles(ws, { "big.txt": Array.from({ length: 2500 }, (_, i) => `l${i + 1}`).join("\n") });
    const out = await run(readFileTool(), { path: "big.txt" }, contextFor(ws));
    expect(out.text).toContain("  2000\tl2000");
    expect(out.text).not.toContain("l2001");
    expect(out.text).toContain("use offset 2001");
  });

  it("refuses an offset past the end", async () => {
    writeFiles(ws, { "a.txt": "one\ntwo\n" });
    const out = await run(readFileTool(), { path: "a.txt", offset: 5 }, contextFor(ws));
    expect(out).toEqual({ isError: true, text: "offset 5 is past the end of a.txt, which has 2 lines." });
  });

  it("refuses binary files with a clear message", async () => {
    writeFiles(ws, { "img.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]) });
    const out = await run(readFileTool(), { path: "img.png" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/img\.png is a binary file .*read_file only reads text files/);
  });

  it("reports a missing file and a directory as error results", async () => {
    fs.mkdirSync(path.join(ws, "dir"));
    const missing = await run(readFileTool(), { path: "nope.txt" }, contextFor(ws));
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain("File not found: nope.txt");
    const dir = await run(readFileTool(), { path: "dir" }, contextFor(ws));
    expect(dir.isError).toBe(true);
    expect(dir.text).toContain("dir is a directory");
  });

  it("cuts very long lines", async () => {
    writeFiles(ws, { "min.js": "x".repeat(5000) });
    const out = await run(readFileTool(), { path: "min.js" }, contextFor(ws));
    expect(out.text.length).toBeLessThan(2200);
    expect(out.text).toContain("[line cut: 5000 characters]");
  });

  it("says when a file is empty", async () => {
    writeFiles(ws, { "e.txt": "" });
    expect((await run(readFileTool(), { path: "e.txt" }, contextFor(ws))).text).toBe("(e.txt is empty)");
  });
});

describe("write_file", () => {
  it("creates parent folders and reports created vs overwritten", async () => {
    const created = await run(writeFileTool(), { path: "deep/er/new.txt", content: "hi\nthere\n" }, contextFor(ws));
    expect(created).toEqual({ isError: false, text: "Created deep/er/new.txt (9 bytes, 2 lines)." });
    expect(fs.readFileSync(path.join(ws, "deep/er/new.txt"), "utf8")).toBe("hi\nthere\n");
    const overwritten = await run(writeFileTool(), { path: "deep/er/new.txt", content: "x" }, contextFor(ws));
    expect(overwritten.text).toBe("Overwrote deep/er/new.txt (1 bytes, 1 line).");
    expect(fs.readFileSync(path.join(ws, "deep/er/new.txt"), "utf8")).toBe("x");
  });

  it("refuses to write over a directory or under a file", async () => {
    fs.mkdirSync(path.join(ws, "d"));
    writeFiles(ws, { f: "file" });
    const dir = await run(writeFileTool(), { path: "d", content: "x" }, contextFor(ws));
    expect(dir.isError).toBe(true);
    expect(dir.text).toContain("d is a directory");
    const under = await run(writeFileTool(), { path: "f/child.txt", content: "x" }, contextFor(ws));
    expect(under.isError).toBe(true);
    expect(under.text).toContain("a parent of it is a file");
  });
});

describe("edit_file", () => {
  it("replaces one exact occurrence and shows the edited lines", async () => {
    writeFiles(ws, { "a.ts": "const a = 1;\nconst b = 2;\nconst c = 3;\n" });
    const out = await run(editFileTool(), { path: "a.ts", old_string: "const b = 2;", new_string: "const b = 20;" }, contextFor(ws));
    expect(out.isError).toBe(false);
    expect(out.text).toContain("Edited a.ts: replaced 1 occurrence.");
    expect(out.text).toContain("     2\tconst b = 20;");
    expect(fs.readFileSync(path.join(ws, "a.ts"), "utf8")).toBe("const a = 1;\nconst b = 20;\nconst c = 3;\n");
  });

  it("fails when old_string is missing, leaving the file unchanged", async () => {
    writeFiles(ws, { "a.ts": "hello\n" });
    const out = await run(editFileTool(), { path: "a.ts", old_string: "bye", new_string: "x" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toContain("old_string was not found in a.ts");
    expect(fs.readFileSync(path.join(ws, "a.ts"), "utf8")).toBe("hello\n");
  });

  it("fails on a non-unique match unless replace_all", async () => {
    writeFiles(ws, { "a.ts": "x = 1\nx = 1\nx = 1\n" });
    const ambiguous = await run(editFileTool(), { path: "a.ts", old_string: "x = 1", new_string: "y = $&" }, contextFor(ws));
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.text).toContain("appears 3 times");
    expect(fs.readFileSync(path.join(ws, "a.ts"), "utf8")).toBe("x = 1\nx = 1\nx = 1\n");
    const all = await run(editFileTool(), { path: "a.ts", old_string: "x = 1", new_string: "y = $&", replace_all: "true" }, contextFor(ws));
    expect(all.text).toContain("replaced 3 occurrences");
    // `$&` stays literal: no regex replacement patterns.
    expect(fs.readFileSync(path.join(ws, "a.ts"), "utf8")).toBe("y = $&\ny = $&\ny = $&\n");
  });

  it("matches LF text in a CRLF file and keeps CRLF", async () => {
    writeFiles(ws, { "w.txt": "one\r\ntwo\r\nthree\r\n" });
    const out = await run(editFileTool(), { path: "w.txt", old_string: "one\ntwo", new_string: "1\n2" }, contextFor(ws));
    expect(out.isError).toBe(false);
    expect(fs.readFileSync(path.join(ws, "w.txt"), "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });

  it("refuses missing files, binary files and no-op edits", async () => {
    writeFiles(ws, { "b.bin": Buffer.from([1, 0, 2]), "a.txt": "a" });
    expect((await run(editFileTool(), { path: "none.txt", old_string: "a", new_string: "b" }, contextFor(ws))).text).toContain("File not found");
    expect((await run(editFileTool(), { path: "b.bin", old_string: "a", new_string: "b" }, contextFor(ws))).text).toContain("binary file");
    const same = await run(editFileTool(), { path: "a.txt", old_string: "a", new_string: "a" }, contextFor(ws));
    expect(same).toEqual({ isError: true, text: "old_string and new_string are the same; nothing to change." });
  });
});

describe("list_dir", () => {
  it("lists entries sorted, folders with / and symlinks with their target", async () => {
    writeFiles(ws, { "b.txt": "", "a/x.txt": "", ".hidden": "" });
    fs.symlinkSync("b.txt", path.join(ws, "link"));
    const out = await run(listDirTool(), {}, contextFor(ws));
    expect(out.text).toBe([".hidden", "a/", "b.txt", "link -> b.txt"].join("\n"));
    expect((await run(listDirTool(), { path: "a" }, contextFor(ws))).text).toBe("x.txt");
  });

  it("reports a missing folder, a file and an empty folder", async () => {
    writeFiles(ws, { "f.txt": "" });
    fs.mkdirSync(path.join(ws, "empty"));
    expect(await run(listDirTool(), { path: "nope" }, contextFor(ws))).toEqual({ isError: true, text: "Folder not found: nope." });
    expect((await run(listDirTool(), { path: "f.txt" }, contextFor(ws))).text).toContain("is a file, not a folder");
    expect((await run(listDirTool(), { path: "empty" }, contextFor(ws))).text).toBe("empty is empty.");
  });
});
