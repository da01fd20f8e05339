// What the sandbox costs each process a run starts (docs/sandbox.md): 100 x `true` through the process helper, with
// the sandbox on (bubblewrap) and off, paired (one of each, alternating, in one process) so the difference holds
// under load where the absolute times do not. Goal (issue 28): <= 15 ms added per process.
// Usage: npm run build && node bench/sandbox.mjs [processes=100]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { resolveSandbox, runInProcessGroup, sandboxSupport } from "../dist/index.js";

const N = Number(process.argv[2] ?? 100);
const support = sandboxSupport();
if (support.kind !== "bwrap") {
  console.error(`bench/sandbox: no bubblewrap here (${support.kind === "none" ? support.reason : support.kind})`);
  process.exit(1);
}
const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "statecraft-bench-sandbox-")));
// A run's sandbox as the process helper takes it (ProcessGroupOptions.sandbox).
const scope = (option) => ({ settings: resolveSandbox(option), workspace: ws, warn() {} });
const modes = { off: scope("off"), on: scope("required"), allow: scope({ mode: "required", network: { allow: ["registry.npmjs.org"] } }) };
const once = async (sandbox) => {
  const t = performance.now();
  const outcome = await runInProcessGroup("true", { cwd: ws, sandbox });
  if (outcome.exitCode !== 0) throw new Error(`exit ${outcome.exitCode}: ${outcome.stderr}`);
  return performance.now() - t;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
for (let i = 0; i < 5; i++) for (const s of Object.values(modes)) await once(s);
const times = { off: [], on: [], allow: [] };
const added = [];
const addedAllow = [];
for (let i = 0; i < N; i++) {
  // Alternate which goes first, so neither always gets the warmer cache.
  const order = i % 2 === 0 ? ["off", "on", "allow"] : ["allow", "on", "off"];
  const t = {};
  for (const name of order) t[name] = await once(modes[name]);
  for (const name of order) times[name].push(t[name]);
  added.push(t.on - t.off);
  addedAllow.push(t.allow - t.off);
}
fs.rmSync(ws, { recursive: true, force: true });
const fmt = (x) => x.toFixed(2);
const result = {
  processes: N,
  offMedianMs: +fmt(median(times.off)),
  onMedianMs: +fmt(median(times.on)),
  addedMedianMs: +fmt(median(added)),
  addedP90Ms: +fmt(p90(added)),
  allowListMedianMs: +fmt(median(times.allow)),
  allowListAddedMedianMs: +fmt(median(addedAllow)),
  goalMs: 15,
  load: os.loadavg()[0].toFixed(2),
};
console.log(`${N} x \`true\`: off ${result.offMedianMs} ms, sandboxed ${result.onMedianMs} ms (median); added per process ${result.addedMedianMs} ms median, ${result.addedP90Ms} ms p90 (goal <= 15); with a network allow-list (proxy + bridge) ${result.allowListMedianMs} ms (+${result.allowListAddedMedianMs}); load ${result.load}`);
console.log(JSON.stringify(result));
