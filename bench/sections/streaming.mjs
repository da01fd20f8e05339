// 3. Streaming: 10 000 text deltas through query() against iterating the model's stream directly.
import { join } from "node:path";
import { removeDir, summarize, tempDir } from "../lib/common.mjs";

const DELTAS = 10_000;

function streamingModel() {
  const deltas = Array.from({ length: DELTAS }, (_, i) => ({ type: "text_delta", text: i % 10 === 9 ? "word " : "w" }));
  const text = deltas.map((d) => d.text).join("");
  const response = { type: "response", response: { text, toolCalls: [], finishReason: "stop" } };
  return {
    name: "streaming",
    async *stream() {
      for (const delta of deltas) yield delta;
      yield response;
    },
  };
}

export async function streaming(sc, { runs, warmups, log }) {
  const direct = async () => {
    const model = streamingModel();
    let count = 0;
    const t0 = performance.now();
    for await (const event of model.stream({ messages: [], tools: [], sessionId: "s", turn: 0 }, { signal: new AbortController().signal })) {
      if (event.type === "text_delta") count++;
    }
    const ms = performance.now() - t0;
    if (count !== DELTAS) throw new Error(`direct stream gave ${count} deltas`);
    return ms;
  };
  const viaQuery = (trace) => async () => {
    const cwd = tempDir();
    const options = { model: streamingModel(), cwd, traceFile: trace ? join(cwd, "trace.jsonl") : false };
    let count = 0;
    let end;
    const t0 = performance.now();
    for await (const event of sc.query("bench", options)) {
      if (event.type === "text_delta") count++;
      else if (event.type === "turn_end") end = event;
    }
    const ms = performance.now() - t0;
    removeDir(cwd);
    if (count !== DELTAS || end?.reason !== "final_answer") throw new Error(`query streamed ${count} deltas and ended ${end?.reason}`);
    return ms;
  };
  const kinds = { direct, queryTraceOff: viaQuery(false), queryTraceOn: viaQuery(true) };
  for (let i = 0; i < warmups; i++) for (const run of Object.values(kinds)) await run();
  const times = { direct: [], queryTraceOff: [], queryTraceOn: [] };
  for (let i = 0; i < runs; i++) for (const [name, run] of Object.entries(kinds)) times[name].push(await run());
  const perDelta = (xs) => summarize(xs.map((ms) => (ms * 1000) / DELTAS));
  const result = { deltas: DELTAS, direct: perDelta(times.direct), queryTraceOff: perDelta(times.queryTraceOff), queryTraceOn: perDelta(times.queryTraceOn) };
  result.overheadTraceOff = result.queryTraceOff.median - result.direct.median;
  result.overheadTraceOn = result.queryTraceOn.median - result.direct.median;
  log(`  direct ${result.direct.median.toFixed(2)} µs/delta, query trace off ${result.queryTraceOff.median.toFixed(2)}, trace on ${result.queryTraceOn.median.toFixed(2)}`);
  return result;
}
