// Bisecting what the collector promotes: the engine machine alone (as steps.mjs's `machine` layer), with parts of a
// step replaced through `engineMachine.provide`, promoted bytes per step read from this script's own --trace-gc-nvp.
// A diagnosis tool (docs/performance.md, "Promoted bytes per step"): the replacements are stand-ins, not the engine.
// Usage: npm run build && node bench/promoted-bisect.mjs [replace=model,tools,perm,effects,emit] [N=2000] [runs=4]
// (PROMOTED_NODE_FLAGS as for promoted.mjs: V8 flags for the measured process, e.g. "--no-opt" to see what the
// interpreter keeps alive, which is what V8 reads its pretenuring decisions from.)
//   model    the model call answers at once (no stream)      tools  the batch reports each call finished with "ok"
//   perm     every call allowed by the policy (no policy)   effects a bare fromCallback with one never-aborted signal
//   emit     no tool_start / tool_result emitted (requestTools only sends, announceResults only marks)
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { traceGc } from "./lib/promoted.mjs";

const REPLACE = (process.argv[2] ?? "").split(",").filter(Boolean);
const N = Number(process.argv[3] ?? 2000);
const RUNS = Number(process.argv[4] ?? 4);

if (process.env.PROMOTED_BISECT_CHILD !== "1") {
  const flags = (process.env.PROMOTED_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const { promoted, scavenges } = traceGc([fileURLToPath(import.meta.url), ...process.argv.slice(2)], { flags, env: { ...process.env, PROMOTED_BISECT_CHILD: "1" } });
  console.log(`replaced [${REPLACE.join(",")}] promoted ${(promoted / (N * RUNS) / 1024).toFixed(2)} KB/step, ${scavenges} scavenges over ${N * RUNS} steps`);
} else {
  const { defineTool } = await import("../dist/index.js");
  const { engineMachine } = await import("../dist/machine/engine.js");
  const { prepare } = await import("../dist/query.js");
  const { effectsActor, defaultEffects } = await import("../dist/actors/effects.js");
  const { runToolsInput } = await import("../dist/machine/work-requests.js");
  const { instantModel } = await import("./engines/statecraft.mjs");
  const { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } = await import("./lib/common.mjs");
  const { runEngine } = await import("./lib/engine-run.mjs");
  // The engine's own copy of XState (see lib/engine-run.mjs).
  const { enqueueActions, fromCallback } = createRequire(new URL("../package.json", import.meta.url))("xstate");
  const tool = defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });

  const once = async () => {
    const cwd = mkdtempSync(join(tmpdir(), "statecraft-bisect-"));
    try {
      const options = { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile: false };
      const { input } = prepare("bench", options);
      const effects = { ...defaultEffects };
      if (REPLACE.includes("model")) {
        let k = 0;
        effects.callModel = async () =>
          k++ < N ? { text: "", toolCalls: [{ name: TOOL_NAME, arguments: `{"i":${k}}` }], finishReason: "tool_calls" } : { text: "done", toolCalls: [], finishReason: "stop" };
      }
      if (REPLACE.includes("tools")) {
        effects.runTools = async (batch, _signal, report) => {
          for (const { call } of batch.calls) report({ type: "tool.finished", id: call.id, result: { content: "ok", isError: false }, durationMs: 0 });
        };
      }
      if (REPLACE.includes("perm")) {
        effects.askPermission = async (asked) =>
          asked.calls.map(({ call }) => ({ toolCallId: call.id, kind: "decided", decision: { toolCallId: call.id, decision: "allow", by: "policy" } }));
      }
      const signal = new AbortController().signal;
      const bare = fromCallback(({ receive, sendBack }) => {
        receive((request) => {
          if (request.type === "cancel") return;
          const name = request.type;
          effects[name](request.input, signal, sendBack).then(
            (output) => sendBack({ type: `${name}.done`, output }),
            (error) => sendBack({ type: `${name}.error`, error }),
          );
        });
      });
      const actions = {};
      if (REPLACE.includes("emit")) {
        actions.announceResults = enqueueActions(({ context }) => {
          for (const record of context.batch) if (record.result) record.announced = true;
        });
        actions.requestTools = enqueueActions(({ context, enqueue }) => {
          enqueue.sendTo("effects", { type: "runTools", input: runToolsInput(context) });
        });
      }
      const machine = engineMachine.provide({ actors: { effects: REPLACE.includes("effects") ? bare : effectsActor(effects) }, actions });
      const { toolCallCount } = await runEngine(input, { machine });
      if (toolCallCount !== N) throw new Error(`ran ${toolCallCount} tool calls, not ${N}`);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
  for (let i = 0; i < RUNS; i++) await once();
}
