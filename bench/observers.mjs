// What each of query()'s recorders costs per step: the engine machine under observeEngine with one recorder at a
// time (transcript, audit, the durable checkpoint, the trace) and with all four, against the same machine observed by
// nobody, alternated run by run in one process. A recorder's cost is the median over runs of its run's CPU time minus
// the bare run's next to it (both µs per step), so what the load adds to both cancels out more than in either figure.
// Several builds can be measured in one process, alternated the same way (each a dist/ folder).
// Usage: npm run build && node bench/observers.mjs [N=1000] [runs=9] [recorders=transcript,audit,checkpoint,trace,all] [dist...]
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { instantModel } from "./engines/statecraft.mjs";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } from "./lib/common.mjs";

const N = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 9);
const RECORDERS = (process.argv[4] ?? "transcript,audit,checkpoint,trace,all").split(",");
const DISTS = process.argv.slice(5).length ? process.argv.slice(5).map((d) => resolve(d)) : [new URL("../dist", import.meta.url).pathname];
const ALL = ["transcript", "audit", "checkpoint", "trace"];

async function load(dist) {
  const at = (path) => import(pathToFileURL(join(dist, path)).href);
  const [index, engine, observe, query, transcript, audit, trace, checkpoint, store] = await Promise.all(
    ["index.js", "machine/engine.js", "observers/observe.js", "query.js", "observers/transcript-writer.js", "observers/audit-writer.js", "observers/trace-writer.js", "observers/run-checkpoint.js", "durable/file-run-store.js"].map(at),
  );
  // A build from before prepare() returned one RunSettings has no run-settings.js: its prepared run carries both.
  const settings = await at("run-settings.js").catch(() => ({ tracedOptionsOf: (p) => p.runOptions, storedSettingsOf: (p) => p.settings }));
  // The build's own copy of XState: an actor of its machine must come from it.
  const { createActor } = createRequire(join(dist, "..", "package.json"))("xstate");
  const tool = index.defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });
  return { dist, createActor, engine, observe, query, transcript, audit, trace, checkpoint, store, settings, tool };
}

/** The recorders as query() makes them (src/query.ts), writing into the run's own temporary folder. */
function recordersOf(build, names, prepared, cwd) {
  const onError = (error) => {
    throw error;
  };
  const { sessionId } = prepared.input;
  const made = [];
  let trace;
  if (names.includes("trace")) {
    trace = build.trace.traceWriter({ file: join(cwd, "trace.jsonl"), sessionId, runOptions: build.settings.tracedOptionsOf(prepared), secrets: [], onError });
    made.push(trace);
  }
  if (names.includes("transcript")) made.push(build.transcript.transcriptWriter({ cwd, sessionId, secrets: [], onError }));
  if (names.includes("audit")) made.push(build.audit.auditWriter({ file: join(cwd, ".agent", "audit.jsonl"), secrets: [], onError }));
  if (names.includes("checkpoint")) {
    const riskOf = (name) => prepared.input.deps.tools.get(name)?.risk;
    made.push(build.checkpoint.runCheckpointer({ store: build.store.fileRunStore(cwd), settings: build.settings.storedSettingsOf(prepared), riskOf, ...(trace ? { trace } : {}), onError }));
  }
  return made;
}

async function once(build, recorder) {
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-observers-"));
  try {
    const options = { model: instantModel(N), tools: [build.tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile: false };
    const prepared = build.query.prepare("bench", options);
    const names = recorder === "none" ? [] : recorder === "all" ? ALL : [recorder];
    const recorders = recordersOf(build, names, prepared, cwd);
    // An observer that takes both kinds of notification, as the query bridge does.
    const inspect = build.observe.observeEngine([...recorders, { state() {}, emitted() {} }]);
    const cpu0 = process.cpuUsage();
    const actor = build.createActor(build.engine.engineMachine, { input: prepared.input, inspect });
    await new Promise((done) => {
      actor.subscribe({ complete: done });
      actor.start();
    });
    const cpu = process.cpuUsage(cpu0);
    for (const r of recorders) r.close();
    if (actor.getSnapshot().context.toolCallCount !== N) throw new Error(`${recorder}: the run did not make ${N} tool calls`);
    return (cpu.user + cpu.system) / N;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const builds = await Promise.all(DISTS.map(load));
const variants = ["none", ...RECORDERS];
const cpu = builds.map(() => Object.fromEntries(variants.map((v) => [v, []])));
for (const build of builds) for (const v of variants) await once(build, v);
for (let r = 0; r < RUNS; r++) {
  for (const v of variants) {
    // Each recorder's run right after a bare one, builds in turn (reversed every other run).
    for (let i = 0; i < builds.length; i++) {
      const b = r % 2 ? builds.length - 1 - i : i;
      cpu[b].none.push(await once(builds[b], "none"));
      if (v !== "none") cpu[b][v].push(await once(builds[b], v));
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [b, build] of builds.entries()) {
  console.log(`${build.dist} (N=${N}, ${RUNS} runs)`);
  console.log(`  none        ${median(cpu[b].none).toFixed(1).padStart(7)} µs/step cpu (the observed machine)`);
  for (const v of RECORDERS) {
    // Pairs: the v run and the bare run just before it (one bare run per variant per round, in variant order).
    const own = cpu[b][v];
    const at = variants.indexOf(v);
    const diffs = own.map((x, r) => x - cpu[b].none[r * variants.length + at]);
    console.log(`  ${v.padEnd(11)} ${median(own).toFixed(1).padStart(7)} µs/step cpu, +${median(diffs).toFixed(1)} µs/step over the bare run beside it`);
  }
}
