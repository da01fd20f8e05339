// Two builds of statecraft in one process, the bench's concurrency section (RUNS runs at once, each 5 tool steps whose
// model answers after 100 ms) run for each in turn: wall ms and CPU ms of each batch, so per-run costs of two builds
// compare on the same load. Each folder is a copy of the repository's built tree (its dist/).
// Usage: node --expose-gc bench/paired-concurrency.mjs <base folder> <other folder> [RUNS=1000] [rounds=3]
import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
const dirs = process.argv.slice(2, 4);
if (dirs.length !== 2) throw new Error("usage: node --expose-gc bench/paired-concurrency.mjs <base folder> <other folder> [RUNS=1000] [rounds=3]");
const RUNS = Number(process.argv[4] ?? 1000), REP = Number(process.argv[5] ?? 3);
const scs = await Promise.all(dirs.map((d) => import(pathToFileURL(join(resolve(d), "dist/index.js")).href)));
function runner(sc) {
  const tool = sc.defineTool({ name: "noop", description: "noop", inputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] }, risk: "read", execute: () => "ok" });
  const slowModel = () => { let call = 0; return { name: "slow", async *stream(_r, { signal }) { const i = call++; if (i < 5) { await delay(100, undefined, { signal }); yield { type: "response", response: { text: "", toolCalls: [{ name: "noop", arguments: `{"i":${i}}` }], finishReason: "tool_calls" } }; } else yield { type: "response", response: { text: "done", toolCalls: [], finishReason: "stop" } }; } }; };
  return async (count) => {
    const cwd = mkdtempSync(join(tmpdir(), "pconc-"));
    const one = async (model) => { let end; for await (const e of sc.query("bench", { model, tools: [tool], cwd, traceFile: join(cwd, "trace.jsonl"), maxToolCalls: 5, maxTurns: 6 })) if (e.type === "turn_end") end = e; if (end?.reason !== "final_answer") throw new Error("bad " + end?.reason); };
    globalThis.gc?.();
    const c0 = process.cpuUsage(); const t0 = performance.now();
    await Promise.all(Array.from({ length: count }, () => one(slowModel())));
    const ms = performance.now() - t0; const c = process.cpuUsage(c0);
    rmSync(cwd, { recursive: true, force: true });
    return { ms, cpu: (c.user + c.system) / 1000 };
  };
}
const rs = scs.map(runner);
for (const r of rs) await r(100);
const out = [[], []];
for (let i = 0; i < REP; i++) for (const k of i % 2 ? [1, 0] : [0, 1]) out[k].push(await rs[k](RUNS));
for (const k of [0, 1]) console.log(dirs[k], out[k].map((x) => `${x.ms.toFixed(0)}ms/cpu${x.cpu.toFixed(0)}`).join(" "));
