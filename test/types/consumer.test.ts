import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileStrict } from "../support/compile.js";

describe("the package's types, as a strict consumer uses them", () => {
  it("narrow trace lines and events, infer a tool's input from its schema, type hooks by the run's tools, give run.result", () => {
    const { ok, output } = compileStrict({}, [join(import.meta.dirname, "fixtures", "consumer.ts")]);
    expect(output).toBe("");
    expect(ok).toBe(true);
  }, 180_000);
});
