import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfinementError, listConfinedDir, openConfinedDir, openConfinedFile, type OpenMode } from "../../src/tools/confined-open.js";
import { editFileTool, grepTool, listDirTool, readFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles } from "./workspace.js";

// The state a check-then-open race leaves: the path was checked (its real path had no symlink) and a component is
// a symlink by the time it is opened. Here that state is set up directly, so every case is deterministic.
let base: string;
let ws: string;
let outside: string;
beforeEach(() => {
  base = makeTempDir("statecraft-open-");
  ws = path.join(base, "workspace");
  outside = path.join(base, "outside");
  writeFiles(base, { "workspace/real/f.txt": "inside\n", "outside/f.txt": "SENTINEL\n", "outside/sub/f.txt": "SENTINEL\n" });
});
afterEach(() => removeDir(base));

const target = (relative: string) => ({ path: path.join(ws, relative), root: ws, display: relative });
const MODES: OpenMode[] = ["read", "update", "write"];

async function expectRefused(promise: Promise<unknown>, reason: ConfinementError["reason"]) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfinementError);
  expect((error as ConfinementError).reason).toBe(reason);
  expect((error as Error).message).not.toContain("SENTINEL");
}

function expectOutsideUntouched() {
  expect(fs.readdirSync(outside).sort()).toEqual(["f.txt", "sub"]);
  expect(fs.readdirSync(path.join(outside, "sub"))).toEqual(["f.txt"]);
  expect(fs.readFileSync(path.join(outside, "f.txt"), "utf8")).toBe("SENTINEL\n");
  expect(fs.readFileSync(path.join(outside, "sub", "f.txt"), "utf8")).toBe("SENTINEL\n");
}

describe("openConfinedFile opens what was checked", () => {
  it("a folder on the path that is now a symlink to outside: refused in every mode, at any depth", async () => {
    fs.symlinkSync(outside, path.join(ws, "dir"));
    fs.mkdirSync(path.join(ws, "real", "deeper"));
    fs.symlinkSync(outside, path.join(ws, "real", "deeper", "x"));
    for (const relative of ["dir/f.txt", "dir/sub/f.txt", "real/deeper/x/f.txt", "dir/new.txt", "dir/new/nested/f.txt"]) {
      for (const mode of MODES) await expectRefused(openConfinedFile(target(relative), mode), "symlink");
    }
    expectOutsideUntouched();
  });

  it("the file itself now a symlink (to outside, dangling, or even inside): refused, nothing created or truncated", async () => {
    fs.symlinkSync(path.join(outside, "f.txt"), path.join(ws, "out-link"));
    fs.symlinkSync(path.join(outside, "planted.txt"), path.join(ws, "dangling"));
    fs.symlinkSync("real/f.txt", path.join(ws, "in-link"));
    for (const relative of ["out-link", "dangling", "in-link"]) {
      for (const mode of MODES) await expectRefused(openConfinedFile(target(relative), mode), "symlink");
    }
    expectOutsideUntouched();
    expect(fs.readFileSync(path.join(ws, "real", "f.txt"), "utf8")).toBe("inside\n");
  });

  it("a path outside the root, or a root replaced by a symlink, is refused", async () => {
    await expectRefused(openConfinedFile({ path: path.join(outside, "f.txt"), root: ws, display: "x" }, "read"), "outside");
    fs.renameSync(ws, path.join(base, "moved"));
    fs.symlinkSync(outside, ws);
    await expectRefused(openConfinedFile(target("f.txt"), "write"), "outside");
    expectOutsideUntouched();
  });

  it("opens plain files in every mode and creates missing folders in write mode", async () => {
    const read = await openConfinedFile(target("real/f.txt"), "read");
    expect((await read.handle.readFile()).toString()).toBe("inside\n");
    await read.handle.close();
    const made = await openConfinedFile(target("real/a/b/new.txt"), "write");
    expect(made.created).toBe(true);
    await made.handle.close();
    expect(fs.statSync(path.join(ws, "real", "a", "b", "new.txt")).isFile()).toBe(true);
    const again = await openConfinedFile(target("real/a/b/new.txt"), "write");
    expect(again.created).toBe(false);
    await again.handle.close();
  });

  it("leaves no file descriptor open, refused or not", async () => {
    fs.symlinkSync(outside, path.join(ws, "dir"));
    fs.linkSync(path.join(outside, "f.txt"), path.join(ws, "hard.txt"));
    const openFds = () => fs.readdirSync("/proc/self/fd").length;
    const before = openFds();
    for (let i = 0; i < 50; i++) {
      for (const relative of ["dir/f.txt", "hard.txt", "missing/f.txt", "real/f.txt", "real"]) {
        for (const mode of MODES) {
          const opened = await openConfinedFile(target(relative), mode).catch(() => undefined);
          await opened?.handle.close();
        }
      }
      openConfinedDir(target("real")).close();
      expect(() => openConfinedDir(target("dir"))).toThrow(ConfinementError);
    }
    expect(openFds()).toBe(before);
  });

  it("the file tools leave none open either, including reads stopped early", async () => {
    writeFiles(ws, { "long.txt": Array.from({ length: 5_000 }, (_, i) => `line ${i}`).join("\n") });
    fs.linkSync(path.join(outside, "f.txt"), path.join(ws, "hard.txt"));
    const context = contextFor(ws);
    const openFds = () => fs.readdirSync("/proc/self/fd").length;
    // grep keeps its idle matching thread (and that thread's event-loop descriptors) for the next search: start it first.
    await run(grepTool(), { pattern: "line 0" }, context);
    const before = openFds();
    for (let i = 0; i < 20; i++) {
      expect((await run(readFileTool(), { path: "long.txt", limit: 3 }, context)).isError).toBe(false);
      expect((await run(readFileTool(), { path: "hard.txt" }, context)).isError).toBe(true);
      expect((await run(writeFileTool(), { path: `real/w${i}.txt`, content: "x" }, context)).isError).toBe(false);
      expect((await run(editFileTool(), { path: "real/f.txt", old_string: i % 2 ? "changed" : "inside", new_string: i % 2 ? "inside" : "changed" }, context)).isError).toBe(false);
      expect((await run(listDirTool(), { path: "real" }, context)).isError).toBe(false);
      expect((await run(grepTool(), { pattern: "line 4999" }, context)).text).toContain("long.txt:5000:line 4999");
    }
    expect(openFds()).toBe(before);
  });
});

describe("listConfinedDir", () => {
  it("refuses folders reached through a symlink pointing outside, lists those inside", async () => {
    fs.symlinkSync("/", path.join(ws, "r"));
    fs.symlinkSync("real", path.join(ws, "in"));
    const list = (dir: string) =>
      new Promise<{ error: NodeJS.ErrnoException | null; names: string[] }>((resolve) =>
        listConfinedDir(ws, dir, (error, entries) => resolve({ error, names: entries.map((e) => e.name) })),
      );
    for (const dir of ["r", "r/etc", "r/tmp", "r/."]) {
      const { error, names } = await list(path.join(ws, dir));
      expect(error, dir).toBeInstanceOf(ConfinementError);
      expect(names).toEqual([]);
    }
    expect((await list(path.join(ws, "in"))).names).toEqual(["f.txt"]);
  });
});
