// statecraft through its public query(): N steps, each one instant tool call answered by an in-process model.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FINAL_TEXT, NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME, probe, removeDir, tempDir } from "../lib/common.mjs";
import { otelObserver } from "../lib/otel.mjs";

/** A statecraft Model answering with one tool call per turn until the last, then text. Built outside the timed region. */
export function instantModel(steps) {
  const calls = Array.from({ length: steps }, (_, i) => ({
    type: "response",
    response: { text: "", toolCalls: [{ name: TOOL_NAME, arguments: `{"i":${i}}` }], finishReason: "tool_calls" },
  }));
  const final = { type: "response", response: { text: FINAL_TEXT, toolCalls: [], finishReason: "stop" } };
  let call = 0;
  return {
    name: "instant",
    async *stream() {
      const i = call++;
      yield i < steps ? calls[i] : final;
    },
  };
}

/**
 * @param sc the built package (`dist/index.js`)
 * @param variant `off` (traceFile: false), `on` (a trace file), `inspect` (trace on plus an inspector with no client),
 *   `window` (trace on, `contextWindow` set and a model that reports no usage, as local servers often do: the
 *   compaction estimate is checked at every step, far from the window, so the run never compacts), `memory`
 *   (`store: "memory"`: the trace, transcript, audit and checkpoints kept in the process, read back from the run)
 * @param inspectOption for `inspect`: what to pass as `options.inspect`
 */
export function statecraftEngine(sc, variant, inspectOption) {
  const tool = sc.defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    inputSchema: NOOP_SCHEMA,
    risk: "read",
    execute: () => {
      probe();
      return "ok";
    },
  });
  return {
    async make(N) {
      const cwd = tempDir();
      const traceFile = variant === "off" ? false : variant === "memory" ? undefined : join(cwd, "trace.jsonl");
      const options = {
        model: instantModel(N),
        tools: [tool],
        cwd,
        maxTurns: N + 1,
        maxToolCalls: N,
        timeoutMs: 3_600_000,
        ...(traceFile === undefined ? { store: "memory" } : { traceFile }),
        ...(variant === "inspect" ? { inspect: inspectOption } : {}),
        ...(variant === "window" ? { contextWindow: 1_000_000_000 } : {}),
        ...(variant === "otel-noop" || variant === "otel" ? { observers: [otelObserver(variant === "otel").observer] } : {}),
      };
      let end;
      let run;
      return {
        traceFile,
        async run() {
          run = sc.query("bench", options);
          for await (const event of run) if (event.type === "turn_end") end = event;
        },
        verify() {
          if (!end || end.reason !== "final_answer" || end.toolCalls !== N) {
            throw new Error(`statecraft (${variant}) ended ${end?.reason} after ${end?.toolCalls} tool calls, expected final_answer after ${N}`);
          }
          if (traceFile !== false) {
            if (traceFile && !existsSync(traceFile)) throw new Error(`statecraft (${variant}): no trace written at ${traceFile}`);
            const lines = traceFile ? readFileSync(traceFile, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)) : run.trace();
            // Seven states per tool step (build_context … append_tool_result) plus build_context, call_model, done.
            const expected = 7 * N + 3;
            if (lines.length < expected) throw new Error(`statecraft (${variant}): trace has ${lines.length} lines, expected at least ${expected}`);
            const last = lines[lines.length - 1];
            if (last.state !== "done") throw new Error(`statecraft (${variant}): the trace's last line is ${last.state}, not done`);
            return { traceLines: lines.length };
          }
          return {};
        },
        dispose() {
          removeDir(cwd);
        },
      };
    },
  };
}
