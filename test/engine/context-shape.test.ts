import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/**
 * Every XState `assign` copies the context's top level. A context in dictionary mode (too many keys, or grown by
 * later assigns) made each copy several times dearer, so this keeps the shape fast, checked with V8's own predicate.
 */
describe("engine context shape", () => {
  it("stays a fast-properties object with few top-level keys through a run", () => {
    const script = `
      import { createActor } from "xstate";
      import { mkdtempSync, rmSync } from "node:fs";
      import { tmpdir } from "node:os";
      import { join } from "node:path";
      import { defineTool, engineMachine, scriptedModel } from "./dist/index.js";
      import { prepare } from "./dist/query.js";
      const tool = defineTool({ name: "t", description: "d", inputSchema: { type: "object" }, risk: "read", execute: () => "ok" });
      const model = scriptedModel([{ toolCalls: [{ name: "t", input: {} }] }, { toolCalls: [{ name: "t", input: { a: 1 } }] }, { text: "done" }]);
      const cwd = mkdtempSync(join(tmpdir(), "shape-"));
      const p = prepare("x", { model, tools: [tool], cwd, traceFile: false });
      const actor = createActor(engineMachine, { input: p.input });
      const seen = [];
      actor.subscribe((s) => seen.push([%HasFastProperties(s.context), Object.keys(s.context).length]));
      await new Promise((r) => { actor.subscribe({ complete: r }); actor.start(); });
      seen.push([%HasFastProperties(actor.getSnapshot().context), Object.keys(actor.getSnapshot().context).length]);
      rmSync(cwd, { recursive: true, force: true });
      console.log(JSON.stringify(seen));
    `;
    const out = execFileSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    const seen = JSON.parse(out) as Array<[boolean, number]>;
    expect(seen.length).toBeGreaterThan(3);
    for (const [fast, keys] of seen) {
      expect(fast).toBe(true);
      expect(keys).toBeLessThanOrEqual(14);
    }
  });
});
