import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { engineMachine } from "../src/index.js";
import { machineChart } from "../src/inspect/chart.js";
import ts from "typescript";
import { compileStrict } from "./support/compile.js";

const root = join(import.meta.dirname, "..");

/**
 * The ```js example and ```ts example blocks of a markdown file, in order, as JavaScript: a TypeScript block's types
 * are stripped as tsc does (its checking is the test that compiles every block).
 */
function examples(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(/```(js|ts) example\n([\s\S]*?)```/g)].map((m) =>
    m[1] === "ts" ? ts.transpileModule(m[2]!, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText : m[2]!,
  );
}

const DOCS = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const NOT_COMPILED = /<!-- not compiled: (.+?) -->\n$/;

/**
 * Every ```ts and ```js block of the README and docs/*.md, as a module file named after where it is (js blocks are
 * checked as JavaScript), except a block right after `<!-- not compiled: <reason> -->` (a signature, a fragment of
 * another project…).
 */
function codeBlocks(): { sources: Record<string, string>; skipped: Array<{ block: string; reason: string }> } {
  const sources: Record<string, string> = {};
  const skipped: Array<{ block: string; reason: string }> = [];
  for (const file of DOCS) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(/```(ts|js)( example)?\n([\s\S]*?)```/g)) {
      const line = text.slice(0, m.index).split("\n").length;
      const block = `${file.replace(/[/.]/g, "_")}_line${line}.${m[1] === "ts" ? "ts" : "mjs"}`;
      const reason = NOT_COMPILED.exec(text.slice(0, m.index));
      if (reason) skipped.push({ block, reason: reason[1] });
      // A block with no import is a module too (top-level await, names of its own).
      else sources[block] = /^\s*(import|export) /m.test(m[3]) ? m[3] : `export {};\n${m[3]}`;
    }
  }
  return { sources, skipped };
}

/** Runs an example as a user would: a module inside the package folder, so `from "statecraft"` is the built package. */
function runExample(code: string): string {
  const dir = mkdtempSync(join(root, ".doc-example-"));
  try {
    const file = join(dir, "example.mjs");
    writeFileSync(file, code);
    // Temporary folders the example makes go inside its own folder, removed below.
    return execFileSync(process.execPath, [file], { cwd: dir, encoding: "utf8", timeout: 30_000, env: { ...process.env, TMPDIR: dir } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs an example that asks a question on stdin: `answer` is typed once `question` shows on stdout, as a person would
 * (a line piped in before the question is asked would be read by no one). Resolves with all it printed.
 */
async function runAnswering(code: string, question: string, answer: string): Promise<string> {
  const dir = mkdtempSync(join(root, ".doc-example-"));
  try {
    const file = join(dir, "example.mjs");
    writeFileSync(file, code);
    const child = spawn(process.execPath, [file], { cwd: dir, env: { ...process.env, TMPDIR: dir }, stdio: "pipe" });
    let out = "";
    let answered = false;
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      out += text;
      if (!answered && out.includes(question)) {
        answered = true;
        child.stdin.end(answer);
      }
    });
    const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
    if (exitCode !== 0) throw new Error(`the example exited ${exitCode}:\n${out}`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("docs", () => {
  it("docs/architecture.md shows the diagram generated from engineMachine, up to date", () => {
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const block = doc.slice(doc.indexOf("```mermaid\n") + "```mermaid\n".length, doc.indexOf("```\n<!-- engine-diagram:end"));
    expect(block.trimEnd()).toBe(machineChart(engineMachine).mermaid.trimEnd());
    for (const state of ["build_context", "call_model", "stream_text", "parse_tool_call", "validate_tool", "ask_permission", "execute_tool", "append_tool_result", "recover", "done"]) {
      expect(block).toContain(`"${state}"`);
    }
  });

  it("the README's benchmark headline is the one bench/results.json gives (npm run bench rewrites both)", async () => {
    const { withHeadline } = (await import(join(root, "bench", "lib", "report.mjs"))) as { withHeadline: (readme: string, results: unknown) => string };
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const results = JSON.parse(readFileSync(join(root, "bench", "results.json"), "utf8")) as unknown;
    expect(readme).toContain("µs per step");
    expect(withHeadline(readme, results)).toBe(readme);
  });

  it("the README's query() example runs as written", () => {
    const [example] = examples("README.md");
    expect(example, "README.md has a ```js example block").toBeDefined();
    const out = runExample(example);
    expect(out).toContain("[tool] list_files");
    expect(out).toContain("final_answer");
  });

  it("the README's tools and permissions example runs as written", () => {
    const out = runExample(examples("README.md")[1]);
    expect(out).toContain("read_file: ok");
    expect(out).toMatch(/asked: edit_file \{"path":"greeting.txt".*\}/);
    expect(out).toContain("edit_file: ok");
    expect(out).toContain("bash: error");
    expect(out).toMatch(/permission_denied permission denied for bash/);
  });

  it("the README's MCP example runs as written against the installed memory server", () => {
    const out = runExample(examples("README.md")[2]);
    expect(out).toMatch(/^mcp__memory__read_graph \{/m);
  });

  it("docs/mcp.md's example runs as written: a write under a rule, the server's own refusal, the memory server", () => {
    const [example] = examples("docs/mcp.md");
    const out = runExample(example);
    expect(out).toMatch(/^mcp fs · \d+ tools$/m);
    expect(out).toContain("mcp memory · 9 tools");
    expect(out).toContain("mcp__fs__write_file: ok");
    expect(out).toMatch(/mcp__fs__read_text_file: error .*Access denied - path outside allowed directories/);
    expect(out).toContain("mcp__memory__create_entities: ok");
    expect(out).toContain("final_answer");
    expect(out.trim().endsWith("- ship it")).toBe(true);
  });

  it("docs/loop.md's examples run as written and show what they claim", () => {
    const [inbox, hooks, compaction, subagents] = examples("docs/loop.md").map((example) => runExample(example));
    expect(inbox).toContain("[steering] Also check the docs.");
    expect(inbox).toContain("[follow_up] Now summarise.");
    expect(inbox).toContain("final_answer after 3 model calls");
    expect(hooks).toContain(".env → Blocked: secrets stay");
    expect(hooks).toContain("tmp/a.log → removed tmp/a.log (checked)");
    expect(hooks).toContain("final_answer");
    expect(compaction).toMatch(/compacted \d+ → \d+/);
    expect(subagents).toContain("subagent (depth 1) ended final_answer");
    expect(subagents.trim().endsWith("final_answer")).toBe(true);
  });

  it("docs/architecture.md's observer example runs as written: one finished(summary) after the run's states and events", () => {
    const [observer] = examples("docs/architecture.md");
    const out = runExample(observer!);
    expect(out).toMatch(/^final_answer after 2 model calls \(\d+ ms\), 1 tool call\nexecute_tool entered 1 time\n$/);
  });

  it("docs/durable.md's examples run as written: a run suspends at its question, and resume() finishes it", () => {
    const [suspend, resumed] = examples("docs/durable.md");
    const out = runExample(suspend!);
    expect(out).toMatch(/^waiting for write_file \S+$/m);
    expect(out).toMatch(/^suspended: session [0-9a-f-]{36} in \//m);
    expect(runExample(resumed!).trim()).toBe("resumed: final_answer");
  });

  it("docs/server.md's example runs as written: a run started over HTTP, its events read as Server-Sent Events", () => {
    const [example] = examples("docs/server.md");
    expect(runExample(example!).trim().split("\n")).toEqual(["Hello over HTTP.", "turn_end final_answer"]);
  });

  it("docs/permissions.md's first example runs as written: the question answered y on stdin, a deny rule's refusal", async () => {
    const [example] = examples("docs/permissions.md");
    const out = await runAnswering(example!, "allow? [y/N/a(lways)] ", "y\n");
    expect(out).toMatch(/^write_file \{"path":"src\/fix\.js".*\} — allow\? \[y\/N\/a\(lways\)\] \[write_file\] ok$/m);
    expect(out).toContain("[read_file] failed");
    expect(out).toMatch(/permission_denied permission denied for read_file: .*read_file\(\.env\*\)/);
  });

  it("docs/trace.md's API example runs as written on a run it records: done line, replay, fork, timeline", () => {
    const [example] = examples("docs/trace.md");
    const out = runExample(example!);
    expect(out).toMatch(/^11 ended final_answer$/m);
    expect(out).toContain("replay identical: true");
    expect(out).toContain("fork final_answer");
    expect(out).toMatch(/^session [0-9a-f-]{36}/m);
  });

  it("no ts or js block needs filling in before it runs: no /path/to/…, PORT or made-up session id", () => {
    const placeholders: string[] = [];
    for (const file of DOCS) {
      const text = readFileSync(join(root, file), "utf8");
      for (const m of text.matchAll(/```(?:ts|js)(?: example)?\n([\s\S]*?)```/g)) {
        const line = text.slice(0, m.index).split("\n").length;
        for (const found of m[1]!.match(/\/path\/to\/\S*|\bPORT\b|\b3f2a9c1e\b/g) ?? []) placeholders.push(`${file}:${line}: ${found}`);
      }
    }
    expect(placeholders).toEqual([]);
  });

  it("every ts and js block of the README and docs/*.md compiles under strict TypeScript, noUncheckedIndexedAccess and exactOptionalPropertyTypes (unless marked, with a reason)", () => {
    const { sources, skipped } = codeBlocks();
    expect(Object.keys(sources).length).toBeGreaterThan(20);
    for (const { block, reason } of skipped) expect(reason.length, `${block}: say why it is not compiled`).toBeGreaterThan(10);
    // The flags people use: an example must not need loosening to compile in their project.
    const { output } = compileStrict(sources, [], { noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true });
    expect(output).toBe("");
  }, 180_000);
});
