// 2. Parallel tools: one response with 8 read-only calls of 50 ms each, through query(). The ideal is 50 ms.
import { setTimeout as delay } from "node:timers/promises";
import { join } from "node:path";
import { removeDir, summarize, tempDir } from "../lib/common.mjs";

const CALLS = 8;
const TOOL_MS = 50;

export async function parallelTools(sc, { runs, warmups, log }) {
  const tool = sc.defineTool({
    name: "slow_read",
    description: "Reads something that takes 50 ms.",
    inputSchema: { type: "object", properties: { k: { type: "integer" } }, required: ["k"] },
    risk: "read",
    execute: async (_input, { signal }) => {
      await delay(TOOL_MS, undefined, { signal });
      return "ok";
    },
  });
  const once = async () => {
    const cwd = tempDir();
    let call = 0;
    const model = {
      name: "instant",
      async *stream() {
        yield call++ === 0
          ? { type: "response", response: { text: "", toolCalls: Array.from({ length: CALLS }, (_, k) => ({ name: "slow_read", arguments: `{"k":${k}}` })), finishReason: "tool_calls" } }
          : { type: "response", response: { text: "done", toolCalls: [], finishReason: "stop" } };
      },
    };
    const options = { model, tools: [tool], cwd, maxToolCalls: CALLS, traceFile: join(cwd, "trace.jsonl") };
    let end;
    const t0 = performance.now();
    for await (const event of sc.query("bench", options)) if (event.type === "turn_end") end = event;
    const ms = performance.now() - t0;
    removeDir(cwd);
    if (end?.reason !== "final_answer" || end.toolCalls !== CALLS) throw new Error(`parallel run ended ${end?.reason} after ${end?.toolCalls} calls`);
    return ms;
  };
  // Process warnings the runs cause (Node prints them too): a warning per run is a finding of its own.
  const warnings = {};
  const onWarning = (warning) => (warnings[warning.name] = (warnings[warning.name] ?? 0) + 1);
  process.on("warning", onWarning);
  for (let i = 0; i < warmups; i++) await once();
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await once());
  await new Promise((resolve) => setImmediate(resolve));
  process.off("warning", onWarning);
  const wall = summarize(times);
  log(`  ${CALLS} × ${TOOL_MS} ms read calls: ${wall.median.toFixed(1)} ms (min ${wall.min.toFixed(1)}, max ${wall.max.toFixed(1)})`);
  if (Object.keys(warnings).length) log(`  process warnings during ${warmups + runs} runs: ${JSON.stringify(warnings)}`);
  return { calls: CALLS, toolMs: TOOL_MS, idealMs: TOOL_MS, goalMs: 65, wallMs: wall, met: wall.median <= 65, runsWithWarnings: warmups + runs, warnings };
}
