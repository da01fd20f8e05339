import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { engineMachine } from "../src/index.js";
import { machineChart } from "../src/inspect/chart.js";

const root = join(import.meta.dirname, "..");

describe("docs", () => {
  it("docs/architecture.md shows the diagram generated from engineMachine, up to date", () => {
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const block = doc.slice(doc.indexOf("```mermaid\n") + "```mermaid\n".length, doc.indexOf("```\n<!-- engine-diagram:end"));
    expect(block.trimEnd()).toBe(machineChart(engineMachine).mermaid.trimEnd());
    for (const state of ["build_context", "call_model", "stream_text", "parse_tool_call", "validate_tool", "ask_permission", "execute_tool", "append_tool_result", "recover", "done"]) {
      expect(block).toContain(`"${state}"`);
    }
  });

  it("the README's query() example runs as written", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const match = readme.match(/```js example\n([\s\S]*?)```/);
    expect(match, "README.md has a ```js example block").not.toBeNull();
    // Inside the package folder, so `import ... from "statecraft"` resolves to the built package (self-reference).
    const dir = mkdtempSync(join(root, ".readme-example-"));
    try {
      const file = join(dir, "example.mjs");
      writeFileSync(file, match![1]);
      const out = execFileSync(process.execPath, [file], { cwd: dir, encoding: "utf8", timeout: 30_000 });
      expect(out).toContain("[tool] list_files");
      expect(out).toContain("final_answer");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
