// Memory of `trace list` and `trace show` on a large trace: generates a ~100 MB trace of many interleaved sessions,
// then summarises every session (list) and loads and formats one of them (show), sampling the heap and RSS while they
// run. The reader streams the file, so what they hold grows with the sessions and the one session shown, not with the
// file. Exits 1 when the heap grew by more than the limit. Not a test: memory, not time, is what it checks.
// Usage: npm run build && node --expose-gc bench/trace-memory.mjs [megabytes=100] [heap limit in MB=64]
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTimeline, formatTimeline, loadSession, summarizeSessions } from "../dist/debug/index.js";

const MEGABYTES = Number(process.argv[2] ?? 100);
const HEAP_LIMIT_MB = Number(process.argv[3] ?? 64);
const MB = 1024 * 1024;

/** The lines of one recorded run: a request, then `turns` tool round trips with ~2 KB results, then done. */
function* runLines(sessionId, turns) {
  let seq = 0;
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const line = (state, turn, details) =>
    JSON.stringify({ v: 1, sessionId, seq: seq++, time: new Date(t0 + seq * 7).toISOString(), kind: "state", state, turn, details });
  yield line("build_context", 0, {
    input: `Fix the failing test number ${sessionId.slice(-4)} in the project`,
    options: { model: "bench", maxTurns: 50, maxToolCalls: 50, timeoutMs: 120000, cwd: "/work", hooks: [], permissions: { mode: "default", allow: [], ask: [], deny: [], onAsk: true }, tools: [{ name: "read_file", description: "Reads a file.", inputSchema: { type: "object" }, risk: "read", executionMode: "parallel" }] },
  });
  for (let turn = 1; turn <= turns; turn++) {
    const id = `call_${sessionId.slice(0, 8)}${String(turn).padStart(12, "0")}`;
    yield line("call_model", turn, { messages: 1 + 2 * (turn - 1) });
    yield line("stream_text", turn, {});
    yield line("parse_tool_call", turn, { response: { text: `Reading file ${turn}.`, toolCalls: [{ id, name: "read_file", arguments: `{"path":"src/file${turn}.js"}` }], finishReason: "tool_calls", usage: { input: 1000 + turn, output: 20 } } });
    yield line("validate_tool", turn, { calls: [{ id, name: "read_file", input: { path: `src/file${turn}.js` } }] });
    yield line("ask_permission", turn, { calls: [id] });
    yield line("execute_tool", turn, { run: [id], permissions: [{ toolCallId: id, decision: "allow", by: "mode", input: { path: `src/file${turn}.js` }, name: "read_file" }] });
    yield line("append_tool_result", turn, { results: [{ toolCallId: id, name: "read_file", content: `// file ${turn}\n` + "export const value = 42; // padding\n".repeat(55), isError: false, durationMs: 1.5 }] });
    yield line("build_context", turn, {});
  }
  yield line("call_model", turns + 1, { messages: 1 + 2 * turns });
  yield line("done", turns + 1, { response: { text: "Fixed.", toolCalls: [], finishReason: "stop", usage: { input: 3000, output: 5 } }, reason: "final_answer", turns: turns + 1, toolCalls: turns, usage: { input: 3000 * turns, output: 25 * turns, cached: 0, reasoning: 0 }, durationMs: turns * 70, text: "Fixed." });
}

/** Writes sessions in groups of 8 whose lines interleave, as concurrent runs do, until the file reaches its size. */
function generate(file) {
  const fd = openSync(file, "w");
  let written = 0;
  let sessions = 0;
  try {
    while (written < MEGABYTES * MB) {
      const group = Array.from({ length: 8 }, () => runLines(`bench-${String(sessions++).padStart(6, "0")}-aaaa-bbbb-cccc`, 20));
      let open = group.length;
      while (open > 0) {
        open = 0;
        let chunk = "";
        for (const run of group) {
          const next = run.next();
          if (next.done) continue;
          open++;
          chunk += next.value + "\n";
        }
        written += writeSync(fd, chunk);
      }
    }
  } finally {
    closeSync(fd);
  }
  return sessions;
}

/** Runs `work`, sampling heap and RSS every few milliseconds; returns its result and the peaks above the start. */
async function measure(name, work) {
  globalThis.gc?.();
  const start = process.memoryUsage();
  let heap = start.heapUsed;
  let rss = start.rss;
  const sample = () => {
    const now = process.memoryUsage();
    heap = Math.max(heap, now.heapUsed);
    rss = Math.max(rss, now.rss);
  };
  const timer = setInterval(sample, 5);
  const began = performance.now();
  const result = await work();
  sample();
  clearInterval(timer);
  const ms = performance.now() - began;
  const heapMb = (heap - start.heapUsed) / MB;
  const rssMb = (rss - start.rss) / MB;
  console.log(`${name.padEnd(6)} ${ms.toFixed(0).padStart(6)} ms   heap +${heapMb.toFixed(1)} MB   rss +${rssMb.toFixed(1)} MB`);
  return { result, heapMb };
}

const dir = mkdtempSync(join(tmpdir(), "statecraft-trace-bench-"));
try {
  const file = join(dir, "trace.jsonl");
  const sessions = generate(file);
  const size = statSync(file).size / MB;
  console.log(`trace: ${size.toFixed(1)} MB, ${sessions} sessions interleaved in groups of 8`);
  const list = await measure("list", () => summarizeSessions(file));
  if (list.result.length !== sessions) throw new Error(`list found ${list.result.length} sessions, expected ${sessions}`);
  const middle = list.result[Math.floor(sessions / 2)].sessionId;
  const show = await measure("show", async () => formatTimeline(buildTimeline(await loadSession(file, middle))));
  if (!show.result.includes("stopped: final_answer")) throw new Error("show did not format the session");
  const worst = Math.max(list.heapMb, show.heapMb);
  if (worst > HEAP_LIMIT_MB) {
    console.log(`FAIL: the heap grew by ${worst.toFixed(1)} MB (limit ${HEAP_LIMIT_MB} MB) on a ${size.toFixed(0)} MB trace: it was not streamed`);
    process.exitCode = 1;
  } else {
    console.log(`ok: at most +${worst.toFixed(1)} MB of heap for a ${size.toFixed(0)} MB trace (limit ${HEAP_LIMIT_MB} MB)`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
