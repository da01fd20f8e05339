// How long `import("statecraft")` takes and how many modules it loads, each entry point in fresh `node` processes
// (a module cache warmed by an earlier import would hide the cost). Reads the built package: `npm run bench:import`
// builds first. Time is measured without the counting hook (the hook itself slows loading); the count is one more run
// with a loader hook that appends each ES module's URL to a file, plus the CommonJS modules in require's cache.
// The figure to compare across machines is cpuMs (the process's CPU time during the import) more than the wall time.
// `xstate` alone is the floor: the engine is an XState machine, so no entry can load faster than XState itself, and
// on a shared machine the ratio to it says more than the milliseconds.
//   node bench/import.mjs [--runs N] [--json] [--root DIR]   (DIR: another built checkout, to compare)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const args = process.argv.slice(2);
const rootAt = args.indexOf("--root");
const root = rootAt >= 0 ? resolve(args[rootAt + 1]) : join(dirname(fileURLToPath(import.meta.url)), "..");
if (!existsSync(join(root, "dist", "index.js"))) throw new Error(`${join(root, "dist", "index.js")} is not built: run \`npm run build\` there first`);
const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 9;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs wants a whole number of runs (1 or more), got ${args[runsAt + 1]}`);
const json = args.includes("--json");

const entries = {
  "xstate (floor)": createRequire(join(root, "package.json")).resolve("xstate").replace(/\.cjs\.js$/, ".cjs.mjs"),
  statecraft: join(root, "dist", "index.js"),
  "statecraft/trace": join(root, "dist", "debug", "index.js"),
  "statecraft/inspect": join(root, "dist", "inspect", "index.js"),
};

const work = mkdtempSync(join(tmpdir(), "statecraft-import-bench-"));
try {
  // The timed child: the import alone, from just before to just after, in milliseconds.
  const timed = join(work, "timed.mjs");
  writeFileSync(
    timed,
    `const t0 = performance.now(); const c0 = process.cpuUsage(); await import(process.argv[2]); const c = process.cpuUsage(c0);\n` +
      `process.stdout.write(JSON.stringify([performance.now() - t0, (c.user + c.system) / 1000]));\n`,
  );
  // The counting hook runs on the loader thread; appending synchronously keeps every URL even if the child exits.
  const hooks = join(work, "hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";\n` +
      `export async function load(url, context, next) { if (!url.startsWith("node:")) appendFileSync(process.env.IMPORT_BENCH_LIST, url + "\\n"); return next(url, context); }\n`,
  );
  const register = join(work, "register.mjs");
  writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hooks).href)});\n`);

  const results = [];
  for (const [name, file] of Object.entries(entries)) {
    const url = pathToFileURL(file).href;
    const times = [];
    const cpu = [];
    for (let i = 0; i < runs; i++) {
      const [wall, used] = JSON.parse(execFileSync(process.execPath, [timed, url], { encoding: "utf8" }));
      times.push(wall);
      cpu.push(used);
    }
    times.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    const list = join(work, `${results.length}.txt`);
    writeFileSync(list, "");
    const cjs = execFileSync(
      process.execPath,
      ["--import", pathToFileURL(register).href, "--input-type=module", "-e", `await import(${JSON.stringify(url)}); const { createRequire } = await import("node:module"); process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url)("module")._cache)));`],
      { env: { ...process.env, IMPORT_BENCH_LIST: list }, encoding: "utf8" },
    );
    const esm = readFileSync(list, "utf8").split("\n").filter(Boolean);
    const urls = [...new Set([...esm, ...JSON.parse(cjs).map((file) => pathToFileURL(file).href)])];
    const fromPackage = (pkg) => urls.filter((u) => u.includes(`/node_modules/${pkg}/`)).length;
    results.push({
      entry: name,
      medianMs: Math.round(times[Math.floor(times.length / 2)] * 10) / 10,
      minMs: Math.round(times[0] * 10) / 10,
      maxMs: Math.round(times[times.length - 1] * 10) / 10,
      // CPU time of the whole process during the import (all its threads): what the wall time would be on an idle
      // machine, give or take, since a shared machine stretches the wall time by waiting, not by work.
      cpuMs: Math.round(cpu[Math.floor(cpu.length / 2)] * 10) / 10,
      modules: urls.length,
      ownModules: urls.filter((u) => u.startsWith(pathToFileURL(join(root, "dist")).href)).length,
      openai: fromPackage("openai"),
      ws: fromPackage("ws"),
      mcpSdk: fromPackage("@modelcontextprotocol/sdk"),
      webTreeSitter: fromPackage("web-tree-sitter"),
      pino: fromPackage("pino"),
      ajv: fromPackage("ajv"),
    });
  }
  if (json) console.log(JSON.stringify({ runs, node: process.version, results }, null, 2));
  else {
    console.log(`import time of each entry point, median of ${runs} fresh processes (node ${process.version})`);
    console.table(results);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
