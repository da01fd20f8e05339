// statecraft's benchmark: loop overhead against the peers and against XState's own floor, parallel tools, streaming,
// concurrency, a long run and replay, in one process. Writes bench/results.json and docs/performance.md.
//
//   npm run bench                      (from the repository root: installs bench/'s own dependencies, then this)
//   node bench/run.mjs [--full] [--quick] [--only=loop,parallel,streaming,concurrency,long,replay,promoted] [--peers=pi,ai,…]
//
// --full measures every peer at N = 5 000 however long it takes (@openai/agents alone takes many minutes there);
// --quick is a smoke run at small sizes that writes nothing; --report renders docs/performance.md from results.json;
// --peers=pi,ai,openai-agents,langgraph measures only the peers named (on a loaded machine the slow ones take most of
// an hour); the report says which were left out.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, "..");
const distDir = join(root, "dist");
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const only = args.find((a) => a.startsWith("--only="))?.slice(7).split(",");
const wants = (section) => !only || only.includes(section);
const peersWanted = args.find((a) => a.startsWith("--peers="))?.slice(8).split(",");
const quick = flag("quick");
const full = flag("full");

// --report: render docs/performance.md (and the README's headline) again from bench/results.json and bench/notes.md,
// measuring nothing.
if (flag("report")) {
  const { renderReport, withHeadline } = await import("./lib/report.mjs");
  const saved = JSON.parse(readFileSync(join(benchDir, "results.json"), "utf8"));
  const notesFile = join(benchDir, "notes.md");
  writeFileSync(join(root, "docs", "performance.md"), renderReport(saved, existsSync(notesFile) ? readFileSync(notesFile, "utf8") : ""));
  writeFileSync(join(root, "README.md"), withHeadline(readFileSync(join(root, "README.md"), "utf8"), saved));
  console.log("wrote docs/performance.md and the README's headline from bench/results.json");
  process.exit(0);
}

// Memory figures need a collection before each window: re-run with --expose-gc when it is missing.
if (typeof globalThis.gc !== "function") {
  const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), ...args], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

const log = (line) => console.log(line);

/** Newest modification time under a folder (TypeScript sources only). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when it is missing or older than a source file. */
function ensureBuilt() {
  const index = join(distDir, "index.js");
  const stale = !existsSync(index) || statSync(index).mtimeMs < newestSource(join(root, "src"));
  if (!stale) return false;
  log("building statecraft (dist/ is missing or older than src/) …");
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
  return true;
}

function machine() {
  const cpuinfo = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const model = cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? os.cpus()[0]?.model ?? "unknown";
  return {
    cpu: model,
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(join(benchDir, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

const startedAt = Date.now();
const built = ensureBuilt();
const sc = await import(pathToFileURL(join(distDir, "index.js")).href);
const { loopOverhead, deriveLoop } = await import("./sections/loop.mjs");
const { statecraftEngine } = await import("./engines/statecraft.mjs");
const { floorEngine } = await import("./engines/floor.mjs");
const { handLoopEngine } = await import("./engines/hand-loop.mjs");

const results = {
  generatedAt: new Date().toISOString(),
  command: "npm run bench",
  mode: quick ? "quick" : full ? "full" : "default",
  machine: machine(),
  built,
  versions: {
    statecraft: JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version,
    xstate: packageVersion("xstate"),
    "@mariozechner/pi-agent-core": packageVersion("@mariozechner/pi-agent-core"),
    ai: packageVersion("ai"),
    "@openai/agents": packageVersion("@openai/agents"),
    "@langchain/langgraph": packageVersion("@langchain/langgraph"),
    "@langchain/core": packageVersion("@langchain/core"),
    ajv: packageVersion("ajv"),
  },
};
log(`statecraft bench (${results.mode}) on ${results.machine.cpu}, ${results.machine.cores} cores, Node ${process.version}, load ${results.machine.loadAverageAtStart.join(" ")}`);

const sizes = quick ? [200, 1000] : [1000, 5000];
const loopOptions = {
  sizes,
  runs: quick ? 3 : 7,
  minRuns: quick ? 1 : 3,
  budgetMs: quick ? 3_000 : 20_000,
  warmupMs: quick ? 200 : 3_000,
  minWarmups: quick ? 1 : 2,
  capMs: full ? Infinity : quick ? 5_000 : 60_000,
  probeMs: quick ? 500 : 2_000,
  probeSize: quick ? 400 : 2000,
  log,
};

// 1. Loop overhead.
if (wants("loop")) {
  log("1. loop overhead");
  const entries = [
    { id: "floor", label: "bare ten-state XState graph (floor)", engine: floorEngine() },
    { id: "statecraft-off", label: "statecraft, trace off", engine: statecraftEngine(sc, "off") },
    { id: "statecraft-on", label: "statecraft, trace on", engine: statecraftEngine(sc, "on") },
    { id: "statecraft-memory", label: "statecraft, store: \"memory\"", engine: statecraftEngine(sc, "memory") },
    { id: "statecraft-window", label: "statecraft, trace on, contextWindow set, no usage reported", engine: statecraftEngine(sc, "window") },
  ];
  entries.push({ id: "statecraft-inspect", label: "statecraft, trace on, inspector (no client)", engine: statecraftEngine(sc, "inspect", { port: 0 }) });
  entries.push({ id: "statecraft-otel-noop", label: "statecraft, trace on, statecraft/otel on a no-op tracer", engine: statecraftEngine(sc, "otel-noop") });
  entries.push({ id: "statecraft-otel", label: "statecraft, trace on, statecraft/otel on a recording tracer", engine: statecraftEngine(sc, "otel") });
  entries.push({ id: "hand-loop", label: "hand-written while loop + ajv", engine: handLoopEngine() });
  const peers = [
    ["pi", "pi-agent-core runAgentLoop", "./engines/pi.mjs", "piEngine"],
    ["ai", "ai generateText (mock model)", "./engines/ai-sdk.mjs", "aiEngine"],
    ["openai-agents", "@openai/agents run() (custom model)", "./engines/openai-agents.mjs", "openaiAgentsEngine"],
    ["langgraph", "LangGraph createReactAgent (fake model)", "./engines/langgraph.mjs", "langgraphEngine"],
  ];
  const missing = [];
  for (const [id, label, file, factory] of peers) {
    if (peersWanted && !peersWanted.includes(id)) {
      missing.push({ id, label, error: "left out of this run (--peers)" });
      continue;
    }
    try {
      const mod = await import(file);
      entries.push({ id, label, engine: mod[factory]() });
    } catch (error) {
      missing.push({ id, label, error: error.message });
      log(`  ${label}: not available (${error.message}); run npm --prefix bench ci`);
    }
  }
  const raw = await loopOverhead(entries, loopOptions);
  results.loop = {
    sizes,
    rows: deriveLoop(raw, sizes, "floor", "pi"),
    raw,
    ...(missing.length ? { missing } : {}),
  };
}

// 2. Parallel tools.
if (wants("parallel")) {
  log("2. parallel tools");
  const { parallelTools } = await import("./sections/parallel.mjs");
  results.parallel = await parallelTools(sc, { runs: quick ? 3 : 9, warmups: 2, log });
}

// 3. Streaming.
if (wants("streaming")) {
  log("3. streaming");
  const { streaming } = await import("./sections/streaming.mjs");
  results.streaming = await streaming(sc, { runs: quick ? 3 : 7, warmups: quick ? 1 : 4, log });
}

// 4. Concurrency.
if (wants("concurrency")) {
  log("4. concurrency");
  const { concurrency } = await import("./sections/concurrency.mjs");
  results.concurrency = await concurrency(sc, { log });
}

// 5. Long run.
if (wants("long")) {
  log("5. long run");
  const { longRun } = await import("./sections/long-run.mjs");
  results.longRun = await longRun(sc, { log });
}

// 6. Replay.
if (wants("replay")) {
  log("6. replay");
  const { replaySection } = await import("./sections/replay.mjs");
  results.replay = await replaySection(sc, distDir, { runs: quick ? 1 : 3, log });
  if (!results.replay.available) log(`  n/a: ${results.replay.reason}`);
}

// 7. Promoted bytes (each layer in fresh processes of its own).
if (wants("promoted")) {
  log("7. promoted bytes per step");
  const { promotedBytes } = await import("./sections/promoted.mjs");
  results.promoted = promotedBytes(quick ? { steps: 500, runs: 1, processes: 2, log } : { log });
}

results.machine.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
results.durationSeconds = Math.round((Date.now() - startedAt) / 1000);
const { goalsOf, renderReport, withHeadline } = await import("./lib/report.mjs");
results.goals = goalsOf(results);
for (const goal of results.goals) log(`goal ${goal.met === null ? "n/a " : goal.met ? "met " : "MISSED"}  ${goal.goal}: ${goal.measured}`);

if (quick || only) {
  log(`(${quick ? "--quick" : "--only"}: bench/results.json and docs/performance.md left as they are)`);
} else {
  writeFileSync(join(benchDir, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  const notesFile = join(benchDir, "notes.md");
  const notes = existsSync(notesFile) ? readFileSync(notesFile, "utf8") : "";
  writeFileSync(join(root, "docs", "performance.md"), renderReport(results, notes));
  writeFileSync(join(root, "README.md"), withHeadline(readFileSync(join(root, "README.md"), "utf8"), results));
  log("wrote bench/results.json, docs/performance.md and the README's headline");
}
log(`bench done in ${results.durationSeconds} s`);
// Peers may leave timers or sockets behind; the measurements are done.
process.exit(0);
