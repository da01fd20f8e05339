import { execFileSync, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The package as a user gets it: `npm pack` of a copy of the sources (its prepack builds dist/ from scratch), the
// tarball installed into a fresh project with the registry's dependencies only (from the npm cache when it has them),
// and every check run there. One pack and one install, shared by all the checks below.

const root = join(import.meta.dirname, "..", "..");
const fixtures = join(import.meta.dirname, "fixtures");
const devDependencies = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies;

let stage: string;
let app: string;
/** The tarball's files, as `npm pack --json` lists them. */
let packed: string[];

/** Runs a command in the consumer project; fails with its output when it exits non-zero. */
function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd: options.cwd ?? app, encoding: "utf8", timeout: 280_000, env: { ...process.env, ...options.env } });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited ${result.status ?? result.signal}\n${result.stdout}\n${result.stderr}\n${result.error?.message ?? ""}`);
  }
  return result;
}

const node = (file: string, ...args: string[]) => run(process.execPath, [file, ...args]);
/** Compiles a fixture project with its tsconfig.json (emitting out/) and type-checks it with tsconfig.exact.json. */
function tsc(project: string): void {
  const compiler = join(app, "node_modules", "typescript", "bin", "tsc");
  run(process.execPath, [compiler, "-p", join(project, "tsconfig.json")]);
  run(process.execPath, [compiler, "-p", join(project, "tsconfig.exact.json")]);
}

beforeAll(() => {
  stage = mkdtempSync(join(tmpdir(), "statecraft-pack-"));
  // A copy of what the tarball is built from, so packing never rewrites this checkout's dist/ under other tests.
  const source = join(stage, "source");
  mkdirSync(source);
  for (const entry of ["package.json", "package-lock.json", "tsconfig.json", "README.md", "LICENSE", "docs", "scripts", "src"]) {
    cpSync(join(root, entry), join(source, entry), { recursive: true });
  }
  symlinkSync(realpathSync(join(root, "node_modules")), join(source, "node_modules"), "dir");
  // Files an older build left behind (a folder since moved, a deleted module): the build must not ship them.
  mkdirSync(join(source, "dist", "trace"), { recursive: true });
  writeFileSync(join(source, "dist", "trace", "replay.js"), "export const stale = true;\n");
  writeFileSync(join(source, "dist", "stale-probe.d.ts"), "export {};\n");
  // …and inside a folder the build copies (the inspector's page once shipped a library it no longer uses).
  mkdirSync(join(source, "dist", "inspect", "page", "vendor"), { recursive: true });
  writeFileSync(join(source, "dist", "inspect", "page", "vendor", "stale-probe.min.js"), "window.stale = true;\n");

  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", stage], { cwd: source, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
  const report = JSON.parse(out.slice(out.indexOf("["))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = report[0].files.map((f) => f.path).sort();

  app = join(stage, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  execFileSync(
    "npm",
    ["install", join(stage, report[0].filename), `typescript@${devDependencies.typescript}`, `@types/node@${devDependencies["@types/node"]}`, "--prefer-offline", "--no-audit", "--no-fund"],
    { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 },
  );
  cpSync(fixtures, join(app, "fixtures"), { recursive: true });
}, 600_000);

afterAll(() => {
  if (stage) rmSync(stage, { recursive: true, force: true });
});

// Generous: tsc over the installed declarations takes over a minute on a busy 2-core machine.
describe("the packed package, installed", { timeout: 300_000 }, () => {
  it("ships the build, the inspector page, the demo sample, the licence and the docs, and nothing stale or of the tests", () => {
    for (const file of [
      "package.json",
      "README.md",
      "LICENSE",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/debug/index.js",
      "dist/debug/index.d.ts",
      "dist/inspect/index.js",
      "dist/inspect/index.d.ts",
      "dist/cli/main.js",
      "dist/inspect/page/index.html",
      "dist/inspect/page/app.js",
      "dist/inspect/page/vendor/elk-worker.min.js",
      "dist/demo/scenario.json",
      "dist/demo/sample/package.json",
      "docs/architecture.md",
    ]) {
      expect(packed, `the tarball lacks ${file}`).toContain(file);
    }
    expect(packed.filter((f) => f.startsWith("dist/trace/") || f.includes("stale-probe")), "stale files of an older build").toEqual([]);
    // The demo's sample project is shipped whole: its failing test is what the demo agent fixes.
    const ours = packed.filter((f) => !f.startsWith("dist/demo/sample/"));
    expect(ours.filter((f) => /^(src|test|bench|scripts)\//.test(f) || /\.test\.[jt]s$/.test(f)), "sources or tests in the tarball").toEqual([]);
    expect(packed).toContain("dist/demo/sample/test/slugify.test.js");
    // The JavaScript is bundled: each entry point is a file with its declaration next to it (a consumer's
    // TypeScript sees all of it), the code they share is in dist/chunks/, and nothing else is .js but the page's
    // browser scripts and the demo's sample.
    const js = packed.filter((f) => f.startsWith("dist/") && f.endsWith(".js") && !f.startsWith("dist/inspect/page/") && !f.startsWith("dist/demo/sample/"));
    const entries = js.filter((f) => !f.startsWith("dist/chunks/"));
    expect(entries).toEqual(expect.arrayContaining(["dist/index.js", "dist/debug/index.js", "dist/inspect/index.js", "dist/dbos/index.js", "dist/server/index.js", "dist/cli/main.js"]));
    expect(entries.filter((f) => !packed.includes(f.replace(/\.js$/, ".d.ts")))).toEqual([]);
    expect(js.filter((f) => f.startsWith("dist/chunks/")).length).toBeGreaterThan(10);
  });

  it("its source maps carry their sources (src/ is not shipped)", () => {
    const maps = packed.filter((f) => f.endsWith(".js.map"));
    const statecraft = join(app, "node_modules", "statecraft");
    // Every built file with code of ours has its map (a chunk that only re-exports another has no code to map).
    const unmapped = packed.filter((f) => f.startsWith("dist/") && f.endsWith(".js") && !f.startsWith("dist/inspect/page/") && !f.startsWith("dist/demo/sample/"))
      .filter((f) => !maps.includes(f + ".map") && /^\s*(const|let|var|function|class|async|export (const|let|function|class|async))\b/m.test(readFileSync(join(statecraft, f), "utf8")));
    expect(unmapped).toEqual([]);
    const sources = new Set<string>();
    const missing = maps.filter((f) => {
      const map = JSON.parse(readFileSync(join(statecraft, f), "utf8")) as { sources: string[]; sourcesContent?: unknown[] };
      for (const source of map.sources) sources.add(source.replace(/^(\.\.\/)+/, ""));
      return !map.sourcesContent || map.sourcesContent.length !== map.sources.length || map.sourcesContent.some((c) => typeof c !== "string" || c.length === 0);
    });
    expect(missing).toEqual([]);
    // The maps cover the sources: the engine, the CLI, the inspector server and the OpenAI provider among them.
    expect(sources.size).toBeGreaterThan(150);
    for (const file of ["src/machine/engine.ts", "src/cli/main.ts", "src/inspect/server.ts", "src/models/openai/stream-attempt.ts"]) expect(sources).toContain(file);
  });

  it("imports each entry point from an ES module, and runs a query", () => {
    const checks = JSON.parse(node(join(app, "fixtures", "esm", "entries.mjs"), stage).stdout) as Record<string, unknown>;
    expect(checks).toEqual({
      query: "function",
      scriptedModel: "function",
      openaiModel: "function",
      replay: "function",
      readTrace: "function",
      startInspector: "function",
      machineChart: "function",
      sameReplay: true,
      sameInspector: true,
      text: "hello from esm",
    });
  });

  it("requires each entry point from CommonJS, and runs a query", () => {
    const result = node(join(app, "fixtures", "cjs", "entries.cjs"), stage);
    const checks = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(checks).toMatchObject({ query: "function", replay: "function", startInspector: "function", sameReplay: true, sameInspector: true, text: "hello from cjs" });
    // require(esm) of a graph without top-level await: no warning, no error on stderr.
    expect(result.stderr).toBe("");
  });

  it("requires statecraft/dbos from CommonJS once its peer dependencies are installed", () => {
    // The optional peers as a project using scale-out has them (linked from this checkout: no registry needed).
    mkdirSync(join(app, "node_modules", "@dbos-inc"), { recursive: true });
    symlinkSync(realpathSync(join(root, "node_modules", "@dbos-inc", "dbos-sdk")), join(app, "node_modules", "@dbos-inc", "dbos-sdk"), "dir");
    symlinkSync(realpathSync(join(root, "node_modules", "pg")), join(app, "node_modules", "pg"), "dir");
    const result = node(join(app, "fixtures", "cjs", "dbos.cjs"));
    expect(JSON.parse(result.stdout)).toEqual({ createWorker: "function", enqueueRun: "function", refused: "INVALID_OPTIONS" });
    expect(result.stderr).toBe("");
  });

  it("compiles a strict TypeScript ES module project against the shipped declarations, and runs it", () => {
    tsc(join(app, "fixtures", "ts-esm"));
    const out = JSON.parse(node(join(app, "fixtures", "ts-esm", "out", "main.js")).stdout) as Record<string, unknown>;
    expect(out).toEqual({ reason: "final_answer", results: ["HI"], traced: true, states: true, refused: "INVALID_TOOL" });
  });

  it("compiles a strict TypeScript CommonJS project (imports become require calls), and runs it", () => {
    tsc(join(app, "fixtures", "ts-commonjs"));
    const emitted = readFileSync(join(app, "fixtures", "ts-commonjs", "out", "main.js"), "utf8");
    expect(emitted).toContain('require("statecraft")');
    const out = JSON.parse(node(join(app, "fixtures", "ts-commonjs", "out", "main.js")).stdout) as Record<string, unknown>;
    expect(out).toEqual({ reason: "final_answer", describeLine: "function", chartStates: 2, module: "object" });
  });

  it("runs the installed CLI: --help, and the offline demo", () => {
    const bin = join(app, "node_modules", ".bin", "statecraft");
    const help = run(bin, ["--help"]);
    expect(help.stdout).toMatch(/^Usage: statecraft/m);
    for (const command of ["run", "chat", "demo", "trace", "inspect"]) expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));

    const tmp = mkdtempSync(join(stage, "demo-tmp-"));
    const here = mkdtempSync(join(stage, "demo-cwd-"));
    const demo = run(bin, ["demo"], { cwd: here, env: { TMPDIR: tmp, NO_COLOR: "1" } });
    expect(demo.stderr).toBe("");
    expect(demo.stdout).toContain("■ final_answer");
    expect(readdirSync(tmp)).toEqual([expect.stringMatching(/^statecraft-demo-/)]);
  });
});
