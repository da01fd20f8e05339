// The engine actor driven directly, the way query() drives it but without its async-generator bridge, so an
// inspector's observer can be added to the engine's observers. Used only to price the inspector while query() has no
// inspector option: the row with the inspector is compared with this same harness without it.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME, probe, removeDir, tempDir } from "../lib/common.mjs";
import { instantModel } from "./statecraft.mjs";

/** Loads the engine's internals from the built package (dist/), with the xstate copy dist itself uses. */
export async function loadInternals(distDir) {
  const url = (path) => pathToFileURL(join(distDir, path)).href;
  const require = createRequire(join(distDir, "index.js"));
  const [xstate, query, engine, observe, trace, transcript, audit, server] = await Promise.all([
    import(pathToFileURL(require.resolve("xstate")).href),
    import(url("query.js")),
    import(url("machine/engine.js")),
    import(url("machine/observe.js")),
    import(url("trace/trace-writer.js")),
    import(url("trace/transcript-writer.js")),
    import(url("trace/audit-writer.js")),
    import(url("inspect/server.js")),
  ]);
  return {
    createActor: xstate.createActor,
    prepare: query.prepare,
    engineMachine: engine.engineMachine,
    observeEngine: observe.observeEngine,
    traceWriter: trace.traceWriter,
    transcriptWriter: transcript.transcriptWriter,
    auditWriter: audit.auditWriter,
    startInspector: server.startInspector,
  };
}

/** @param withInspector start an inspector (no page ever connects) for each run, outside the timed region */
export function directEngine(sc, internals, withInspector) {
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
  const { createActor, prepare, engineMachine, observeEngine, traceWriter, transcriptWriter, auditWriter } = internals;
  return {
    async make(N) {
      const cwd = tempDir();
      const traceFile = join(cwd, "trace.jsonl");
      const options = { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile };
      // Started (and, in dispose, closed) outside the timed region, like the model and the workspace.
      const inspector = withInspector ? await internals.startInspector({ port: 0 }) : undefined;
      let output;
      return {
        async run() {
          const prepared = prepare("bench", options);
          const { input } = prepared;
          const onError = (error) => {
            throw error;
          };
          const writers = [
            traceWriter({ file: traceFile, sessionId: input.sessionId, runOptions: prepared.runOptions, secrets: [], onError }),
            transcriptWriter({ cwd, sessionId: input.sessionId, onError }),
            auditWriter({ file: join(cwd, ".agent", "audit.jsonl"), secrets: [], onError }),
          ];
          const observers = [...writers];
          let inspected;
          if (inspector) {
            inspected = inspector.attach({ sessionId: input.sessionId, input: "bench", runOptions: prepared.runOptions });
            observers.push(inspected.observer);
          }
          const actor = createActor(engineMachine, { input, inspect: observeEngine(observers) });
          const done = new Promise((resolve, reject) => actor.subscribe({ complete: resolve, error: reject }));
          actor.start();
          await done;
          output = actor.getSnapshot().output;
          actor.stop();
          inspected?.end();
          for (const writer of writers) writer.close();
        },
        verify() {
          if (output?.reason !== "final_answer") throw new Error(`direct engine ended ${output?.reason}`);
          if (!existsSync(traceFile)) throw new Error("direct engine: no trace written");
          const lines = readFileSync(traceFile, "utf8").split("\n").filter(Boolean).length;
          if (lines < 7 * N + 3) throw new Error(`direct engine: trace has ${lines} lines, expected at least ${7 * N + 3}`);
          return { traceLines: lines };
        },
        async dispose() {
          await inspector?.close();
          removeDir(cwd);
        },
      };
    },
  };
}
