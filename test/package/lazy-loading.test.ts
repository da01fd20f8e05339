import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dist = join(import.meta.dirname, "..", "..", "dist");
const entry = (file: string) => JSON.stringify(pathToFileURL(join(dist, file)).href);

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "statecraft-lazy-"));
  // ES modules are seen by a loader hook (it appends each URL to a file), CommonJS ones in require's cache: both are
  // listed by `loaded()` in the child, at the points the script asks.
  writeFileSync(
    join(work, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function load(url, context, next) { appendFileSync(process.env.LAZY_LIST, url + "\\n"); return next(url, context); }`,
  );
  writeFileSync(join(work, "register.mjs"), `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(join(work, "hooks.mjs")).href)});`);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `body` (an ES module's code) in a fresh node; `mark(name)` in it records what is loaded by then. */
function loadedAt(body: string): Record<string, string[]> {
  const list = join(work, `list-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(list, "");
  const script = join(work, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    script,
    `import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
const marks = {};
const mark = (name) => {
  const esm = readFileSync(process.env.LAZY_LIST, "utf8").split("\\n").filter(Boolean).map((u) => u.startsWith("file:") ? new URL(u).pathname : u);
  // Node's own modules too (process.moduleLoadList, as node:<name>): a require() of one is seen by neither list above.
  const builtin = process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => "node:" + m.slice("NativeModule ".length));
  marks[name] = [...new Set([...esm, ...Object.keys(createRequire(import.meta.url)("module")._cache), ...builtin])];
};
${body}
process.stdout.write(JSON.stringify(marks));`,
  );
  const out = execFileSync(process.execPath, ["--import", pathToFileURL(join(work, "register.mjs")).href, script], {
    encoding: "utf8",
    env: { ...process.env, LAZY_LIST: list },
  });
  return JSON.parse(out) as Record<string, string[]>;
}

const fromPackage = (files: readonly string[], name: string) => files.filter((f) => f.includes(`/node_modules/${name}/`));
/**
 * The source files (`src/…`) whose code the loaded built files hold. dist/ is bundled, so a module is found by the
 * source map of the chunk it went into, not by a file of its own.
 */
function sourcesIn(files: readonly string[]): string[] {
  const sources = new Set<string>();
  for (const file of files) {
    if (!file.startsWith(dist + "/") || !file.endsWith(".js") || !existsSync(file + ".map")) continue;
    const map = JSON.parse(readFileSync(file + ".map", "utf8")) as { sources: string[] };
    for (const source of map.sources) sources.add(source.replace(/^(\.\.\/)+/, ""));
  }
  return [...sources];
}
const HEAVY = ["openai", "@anthropic-ai/sdk", "@ai-sdk/provider", "@ai-sdk/anthropic", "ai", "ws", "web-tree-sitter", "ajv", "ajv-formats", "pino", "picomatch", "tinyglobby", "@modelcontextprotocol/sdk", "@modelcontextprotocol/client", "zod", "valibot", "@valibot/to-json-schema", "arktype"];

describe("what importing statecraft loads", () => {
  it("the main entry loads none of the SDK, the WebSocket server, the parser, ajv, pino, picomatch or tinyglobby", () => {
    const { imported } = loadedAt(`await import(${entry("index.js")}); mark("imported");`);
    expect(imported.some((f) => f.endsWith("/dist/index.js")), "the probe sees the entry itself").toBe(true);
    for (const name of HEAVY) expect(fromPackage(imported, name), `import("statecraft") loaded ${name}`).toEqual([]);
    const sources = sourcesIn(imported);
    expect(sources, "the probe sees the engine's code").toContain("src/machine/engine.ts");
    expect(sources.filter((f) => f === "src/inspect/server.ts" || f === "src/models/openai/stream-attempt.ts")).toEqual([]);
    expect(sources.filter((f) => f === "src/models/anthropic/stream-attempt.ts" || f === "src/models/ai-sdk/call.ts")).toEqual([]);
  });

  it("the main entry loads neither the replayer, the search helpers nor node's child_process, readline or worker_threads", () => {
    // What the probe itself loaded before the import (the loader hook runs on a worker thread) is not the entry's.
    const marks = loadedAt(`mark("before"); await import(${entry("index.js")}); mark("imported");`);
    const imported = marks.imported.filter((f) => !marks.before.includes(f));
    expect(imported.some((f) => f.endsWith("/dist/index.js")), "the probe sees the entry itself").toBe(true);
    expect(imported, "the probe sees node's own modules the entry loads").toContain("node:fs/promises");
    const lazy = ["src/debug/replay-run.ts", "src/debug/replay-compare.ts", "src/tools/builtin/gitignore.ts", "src/tools/builtin/grep-worker.ts", "src/mcp/tool.ts", "src/models/openai/request-body.ts"];
    const sources = sourcesIn(imported);
    expect(sources, "the probe sees the engine's code").toContain("src/machine/engine.ts");
    expect(sources.filter((f) => lazy.includes(f)), "import(\"statecraft\") loaded these").toEqual([]);
    expect(imported.filter((f) => ["node:child_process", "node:readline", "node:worker_threads", "node:crypto"].includes(f)), "import(\"statecraft\") loaded these").toEqual([]);
  });

  it("the trace and inspect entries load none of them either", () => {
    const marks = loadedAt(`await import(${entry("debug/index.js")}); mark("trace"); await import(${entry("inspect/index.js")}); mark("inspect");`);
    for (const name of HEAVY) expect(fromPackage(marks.inspect, name), `statecraft/trace or statecraft/inspect loaded ${name}`).toEqual([]);
  });

  it("each part loads when first used, and works", () => {
    const marks = loadedAt(`
const { defineTool, createPermissionPolicy, bashTool, openaiModel, startInspector, AgentError } = await import(${entry("index.js")});
defineTool({ name: "t", description: "d", inputSchema: { type: "object", properties: {} }, risk: "read", execute: async () => "ok" });
mark("defined");
const policy = createPermissionPolicy({ deny: ["bash(rm *)"] });
let early;
try { policy.evaluate(bashTool(), { command: "ls" }); } catch (error) { early = error.message; }
await policy.ready;
const verdict = policy.evaluate(bashTool(), { command: "echo hi && rm -rf /" });
mark("policy");
// A port nothing listens on (fetch refuses some ports outright, such as 9: those are refused at openaiModel()).
const net = await import("node:net");
const server = net.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;
await new Promise((resolve) => server.close(resolve));
const model = openaiModel({ model: "m", baseURL: \`http://127.0.0.1:\${port}/v1\`, apiKey: "k", maxRetries: 0 });
mark("model");
let failed;
try { for await (const _ of model.stream({ messages: [{ role: "user", content: "hi" }], tools: [] }, { signal: new AbortController().signal })) {} } catch (error) { failed = error; }
mark("called");
const inspector = await startInspector({ port: 0 });
await inspector.close();
mark("inspected");
marks.result = [JSON.stringify({ port, early, verdict: verdict.kind, rule: verdict.rule, failed: failed instanceof AgentError ? failed.code + " " + failed.message : String(failed) })];
`);
    const result = JSON.parse(marks.result[0]) as { port: number; early?: string; verdict: string; rule?: string; failed: string };
    expect(fromPackage(marks.defined, "ajv").length).toBeGreaterThan(0);
    expect(fromPackage(marks.defined, "web-tree-sitter")).toEqual([]);
    // Before the parser is there a command is refused, not decided unparsed; after `ready` the deny rule holds.
    expect(result.early).toMatch(/bash parser is not loaded yet: `await policy.ready`/);
    expect(result.verdict).toBe("deny");
    expect(result.rule).toBe("bash(rm *)");
    expect(fromPackage(marks.policy, "web-tree-sitter").length).toBeGreaterThan(0);
    // Making the model checks options only; the SDK comes with the first request, whose failure it classifies.
    expect(fromPackage(marks.model, "openai")).toEqual([]);
    expect(fromPackage(marks.called, "openai").length).toBeGreaterThan(0);
    expect(result.failed).toMatch(new RegExp(`^MODEL_ERROR .*127\\.0\\.0\\.1:${result.port}`));
    expect(fromPackage(marks.called, "ws")).toEqual([]);
    expect(fromPackage(marks.inspected, "ws").length).toBeGreaterThan(0);
    // The chunks that came with them hold the code the first test found absent.
    expect(sourcesIn(marks.model)).not.toContain("src/models/openai/stream-attempt.ts");
    expect(sourcesIn(marks.called)).toContain("src/models/openai/stream-attempt.ts");
    expect(sourcesIn(marks.called)).not.toContain("src/inspect/server.ts");
    expect(sourcesIn(marks.inspected)).toContain("src/inspect/server.ts");
    // node:crypto comes with the first thing that needs it (the inspector's token), not with the import.
    expect(marks.defined).not.toContain("node:crypto");
    expect(marks.inspected).toContain("node:crypto");
  });
});

describe("what the other providers load", () => {
  it("anthropicModel loads @anthropic-ai/sdk with its first request, not when made", () => {
    const marks = loadedAt(`
const { anthropicModel, AgentError } = await import(${entry("index.js")});
const net = await import("node:net");
const server = net.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;
await new Promise((resolve) => server.close(resolve));
const model = anthropicModel({ model: "claude-x", maxTokens: 16, baseUrl: \`http://127.0.0.1:\${port}\`, apiKey: "k", maxRetries: 0 });
mark("model");
let failed;
try { for await (const _ of model.stream({ messages: [{ role: "user", content: "hi" }], tools: [] }, { signal: new AbortController().signal })) {} } catch (error) { failed = error; }
mark("called");
marks.result = [failed instanceof AgentError ? failed.code + " " + failed.message : String(failed)];
`);
    expect(fromPackage(marks.model, "@anthropic-ai/sdk")).toEqual([]);
    expect(sourcesIn(marks.model)).not.toContain("src/models/anthropic/stream-attempt.ts");
    expect(fromPackage(marks.called, "@anthropic-ai/sdk").length).toBeGreaterThan(0);
    expect(sourcesIn(marks.called)).toContain("src/models/anthropic/stream-attempt.ts");
    expect(marks.result[0]).toMatch(/^MODEL_ERROR could not connect to http:\/\/127\.0\.0\.1:\d+/);
    // The OpenAI SDK is not needed for Claude.
    expect(fromPackage(marks.called, "openai")).toEqual([]);
  });
});

describe("what statecraft/otel loads", () => {
  it("neither statecraft nor statecraft/otel loads @opentelemetry/api until openTelemetry() is called", () => {
    const marks = loadedAt(
      `await import(${entry("index.js")}); mark("main"); const { openTelemetry } = await import(${entry("otel/index.js")}); mark("otel"); openTelemetry(); mark("called");`,
    );
    expect(fromPackage(marks.main, "@opentelemetry/api")).toEqual([]);
    expect(sourcesIn(marks.main).filter((f) => f.startsWith("src/otel/"))).toEqual([]);
    expect(fromPackage(marks.otel, "@opentelemetry/api")).toEqual([]);
    expect(fromPackage(marks.called, "@opentelemetry/api").length).toBeGreaterThan(0);
  });
});
