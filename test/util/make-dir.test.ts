import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { trustFolder } from "../../src/cli/user-config.js";
import { JsonlWriter } from "../../src/record/jsonl-writer.js";
import { sessionKey } from "../../src/record/session-key.js";
import { makeDirectory } from "../../src/util/make-dir.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "statecraft-mkdir-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("makeDirectory: mkdir -p that fails instead of spinning", () => {
  it("creates every missing folder, and accepts one that exists", () => {
    makeDirectory(join(dir, "a", "b", "c"));
    expect(statSync(join(dir, "a", "b", "c")).isDirectory()).toBe(true);
    expect(() => makeDirectory(join(dir, "a", "b"))).not.toThrow();
    expect(() => makeDirectory(dir)).not.toThrow();
  });

  it.each([
    ["/proc/1/nope", /could not create the folder \/proc\/1\/nope: ENOENT/],
    ["/proc/1/nope/x/y", /could not create the folder \/proc\/1\/nope: ENOENT/],
    ["/proc/self/fd/nope", /could not create the folder \/proc\/self\/fd\/nope/],
    ["/sys/nope/x", /could not create the folder \/sys\/nope/],
  ])("%s fails at once, naming the folder", (path, message) => {
    expect(() => makeDirectory(path)).toThrow(message);
  });

  it("gives the folders it creates the mode asked for", () => {
    makeDirectory(join(dir, "private", "inner"), 0o700);
    expect(statSync(join(dir, "private")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "private", "inner")).mode & 0o777).toBe(0o700);
  });

  it("a file in the way is named as such", () => {
    writeFileSync(join(dir, "plain"), "x");
    expect(() => makeDirectory(join(dir, "plain", "sub", "deeper"))).toThrow(`${join(dir, "plain")} is a file, not a folder`);
    expect(() => makeDirectory(join(dir, "plain"))).toThrow("is a file, not a folder");
  });
});

describe("JsonlWriter under a path that can't be created", () => {
  it("reports the failure once and returns, instead of spinning in mkdir", () => {
    const errors: string[] = [];
    const writer = new JsonlWriter("/proc/1/nope/x", (error) => errors.push(error.message));
    writer.write({ a: 1 });
    writer.flush();
    writer.write({ a: 2 });
    writer.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/could not write \/proc\/1\/nope\/x: could not create the folder \/proc\/1\/nope: .*later lines of this run are not recorded/);
  });
});

describe("the user's statecraft folder under a path that can't be created", () => {
  it("the session key and the trust list fail with the folder named, instead of spinning", () => {
    const saved = process.env.STATECRAFT_HOME;
    process.env.STATECRAFT_HOME = "/proc/1/nope/statecraft";
    try {
      expect(() => sessionKey()).toThrow(/\/proc\/1\/nope/);
    } finally {
      if (saved === undefined) delete process.env.STATECRAFT_HOME;
      else process.env.STATECRAFT_HOME = saved;
    }
    expect(() => trustFolder(dir, { XDG_CONFIG_HOME: "/proc/1/nope" })).toThrow(/could not create the folder \/proc\/1\/nope/);
  });
});
