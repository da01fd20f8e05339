import { describe, expect, it } from "vitest";
import { loadOnFirstUse } from "../../src/models/load-on-first-use.js";

describe("loadOnFirstUse", () => {
  it("loads nothing until the first call, then shares that one load with every later call", async () => {
    let loads = 0;
    const load = loadOnFirstUse(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([load(), load()]);
    const c = await load();
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
  });

  it("forgets a failed load: the failure reaches the caller, and the next call loads again", async () => {
    let loads = 0;
    const load = loadOnFirstUse(async () => {
      loads++;
      if (loads === 1) throw new Error("Cannot find package '@anthropic-ai/sdk'");
      return "loaded";
    });
    await expect(load()).rejects.toThrow("Cannot find package '@anthropic-ai/sdk'");
    await expect(load()).resolves.toBe("loaded");
    await expect(load()).resolves.toBe("loaded");
    expect(loads).toBe(2);
  });
});
