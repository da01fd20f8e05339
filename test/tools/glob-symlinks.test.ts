import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { globTool, grepTool } from "../../src/tools/builtin/index.js";
import { contextFor, makeTempDir, removeDir, run } from "./workspace.js";

// glob walks from a pattern's fixed prefix (`r/etc` for `r/etc/**`): a symlinked folder there must not be walked.
let base: string;
let ws: string;
let outside: string;
beforeEach(() => {
  base = makeTempDir("statecraft-globlink-");
  ws = path.join(base, "workspace");
  outside = path.join(base, "outside");
  for (const [name, content] of Object.entries({
    "workspace/src/a.ts": "export const a = 1;\n",
    "workspace/sub/keep.ts": "keep\n",
    "outside/etc/passwd": "root:x:0:0\n",
    "outside/a/b/secret.txt": "SECRET\n",
  })) {
    fs.mkdirSync(path.dirname(path.join(base, name)), { recursive: true });
    fs.writeFileSync(path.join(base, name), content);
  }
  fs.symlinkSync("/", path.join(ws, "r"));
  fs.symlinkSync(outside, path.join(ws, "o"));
  fs.symlinkSync(outside, path.join(ws, "sub", "deep"));
  fs.symlinkSync("c2", path.join(ws, "c1"));
  fs.symlinkSync("../outside", path.join(ws, "c2"));
});
afterEach(() => removeDir(base));

const ROOT_PATTERNS = ["r/etc/**", "r/etc/*", "r/etc/passwd", "r/etc/pass*", "./r/etc/**", "r//etc/**", "{r,x}/etc/**", "r/e*/**", "r/etc/**/*", "r/*", "r/./etc/*"];
const OUTSIDE_PATTERNS = ["o/**", "o/**/*", "o/a/b/*", "o/a/b/secret.txt", "**/secret.txt", "*/a/**", "sub/deep/**", "sub/*/a/**", "c1/**", "c1/etc/passwd", "{o,c1}/**/*"];

describe("glob does not list names through symlinked folders pointing outside", () => {
  it(`ws/r -> /: ${ROOT_PATTERNS.length} patterns list nothing from /`, async () => {
    // The attack has something to find: / has an etc folder with files in it.
    expect(fs.readdirSync("/etc").length).toBeGreaterThan(0);
    for (const pattern of ROOT_PATTERNS) {
      const out = await run(globTool(), { pattern }, contextFor(ws));
      expect(out, pattern).toEqual({ isError: false, text: `No files match ${pattern} in ..` });
    }
  });

  it(`symlinks to an outside folder, direct, nested and chained: ${OUTSIDE_PATTERNS.length} patterns list nothing`, async () => {
    for (const pattern of OUTSIDE_PATTERNS) {
      const out = await run(globTool(), { pattern }, contextFor(ws));
      expect(out, pattern).toEqual({ isError: false, text: `No files match ${pattern} in ..` });
    }
    const fromSub = await run(globTool(), { pattern: "deep/**", path: "sub" }, contextFor(ws));
    expect(fromSub.text).toBe("No files match deep/** in sub.");
  });

  it("grep's glob filter is held to the same rule", async () => {
    for (const glob of [...ROOT_PATTERNS, ...OUTSIDE_PATTERNS]) {
      const out = await run(grepTool(), { pattern: "root|SECRET", glob }, contextFor(ws));
      expect(out, glob).toEqual({ isError: false, text: `No matches for /root|SECRET/ in . (files matching ${glob}).` });
    }
  });

  it("a symlinked folder staying inside the workspace is still walked from the prefix", async () => {
    fs.symlinkSync("src", path.join(ws, "lib"));
    expect((await run(globTool(), { pattern: "lib/**/*.ts" }, contextFor(ws))).text).toBe("lib/a.ts");
    expect((await run(globTool(), { pattern: "**/*.ts" }, contextFor(ws))).text).toBe(["src/a.ts", "sub/keep.ts"].join("\n"));
  });
});
