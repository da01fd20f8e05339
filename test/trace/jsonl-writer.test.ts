import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { JsonlWriter } from "../../src/record/jsonl-writer.js";
import { tempDir } from "../support/engine.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const workspace = () => {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
};
const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);
const openDescriptorsTo = (file: string) =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === resolve(file);
    } catch {
      return false;
    }
  }).length;

describe("JsonlWriter", () => {
  it("writes lines whole at the next quiescent point, not one write per line", async () => {
    const file = join(workspace(), "a", "trace.jsonl");
    const out = new JsonlWriter(file);
    out.write({ n: 1 });
    out.write({ n: 2 });
    expect(existsSync(file)).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(lines(file)).toEqual(['{"n":1}', '{"n":2}']);
    out.close();
  });

  it("flushes by size while the event loop never turns (64 lines)", () => {
    const file = join(workspace(), "trace.jsonl");
    const out = new JsonlWriter(file);
    for (let i = 0; i < 63; i++) out.write({ i });
    expect(existsSync(file)).toBe(false);
    for (let i = 63; i < 150; i++) out.write({ i });
    expect(lines(file)).toHaveLength(128);
    out.close();
    expect(lines(file)).toHaveLength(150);
  });

  it("writers of one file share one descriptor; lines keep the order they were written in; the last close closes it", () => {
    if (!existsSync("/proc/self/fd")) return;
    const file = join(workspace(), "shared.jsonl");
    const writers = Array.from({ length: 20 }, () => new JsonlWriter(file));
    writers.forEach((w, i) => w.write({ w: i, line: 1 }));
    writers.forEach((w, i) => w.write({ w: i, line: 2 }));
    writers[0].flush();
    expect(openDescriptorsTo(file)).toBe(1);
    for (const w of writers.slice(0, 19)) w.close();
    writers[19].write({ w: 19, line: 3 });
    writers[19].flush();
    expect(openDescriptorsTo(file)).toBe(1);
    writers[19].close();
    expect(openDescriptorsTo(file)).toBe(0);
    const written = lines(file).map((l) => JSON.parse(l) as { w: number; line: number });
    expect(written).toEqual([
      ...writers.map((_, i) => ({ w: i, line: 1 })),
      ...writers.map((_, i) => ({ w: i, line: 2 })),
      { w: 19, line: 3 },
    ]);
    // A later writer opens the file again and appends.
    const later = new JsonlWriter(file);
    later.write({ later: true });
    later.close();
    expect(lines(file)).toHaveLength(42);
  });

  it("a closed writer writes nothing more, while the others of its file go on", () => {
    const file = join(workspace(), "t.jsonl");
    const a = new JsonlWriter(file);
    const b = new JsonlWriter(file);
    a.write({ a: 1 });
    a.close();
    a.write({ a: 2 });
    b.write({ b: 1 });
    b.close();
    expect(lines(file)).toEqual(['{"a":1}', '{"b":1}']);
  });

  it("reports a write failure once to every writer of the file and never throws; a new writer tries again", () => {
    // A file where the directory should be: unwritable even for root.
    const dir = workspace();
    const blocker = join(dir, "not-a-dir");
    execFileSync("touch", [blocker]);
    const file = join(blocker, "trace.jsonl");
    const errors: string[][] = [[], []];
    const a = new JsonlWriter(file, (e) => errors[0].push(e.message));
    const b = new JsonlWriter(file, (e) => errors[1].push(e.message));
    a.write({ x: 1 });
    b.write({ x: 2 });
    expect(() => a.flush()).not.toThrow();
    a.write({ x: 3 });
    a.flush();
    expect(errors.map((e) => e.length)).toEqual([1, 1]);
    expect(errors[0][0]).toMatch(/could not write .*trace\.jsonl: .*later lines of this run are not recorded/);
    a.close();
    b.close();
    rmSync(blocker);
    mkdirSync(blocker);
    chmodSync(blocker, 0o755);
    const c = new JsonlWriter(file);
    c.write({ x: 4 });
    c.close();
    expect(lines(file)).toEqual(['{"x":4}']);
  });

  it("lines still buffered when the process exits are written (a crash keeps what was recorded)", () => {
    const dir = workspace();
    const file = join(dir, "exit.jsonl");
    const script = `
      import { JsonlWriter } from ${JSON.stringify(resolve("dist/record/jsonl-writer.js"))};
      const a = new JsonlWriter(${JSON.stringify(file)});
      const b = new JsonlWriter(${JSON.stringify(file)});
      a.write({ a: 1 }); b.write({ b: 1 });
      process.exit(3);
    `;
    let status = 0;
    try {
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { stdio: "pipe" });
    } catch (error) {
      status = (error as { status: number }).status;
    }
    expect(status).toBe(3);
    expect(lines(file)).toEqual(['{"a":1}', '{"b":1}']);
  });
});
