import { createHash } from "node:crypto";
import { DBOS } from "@dbos-inc/dbos-sdk";
import type pg from "pg";
import { defaultEffects, type Effects } from "../actors/effects.js";
import type { Report, WorkEvent } from "../actors/report.js";
import { AgentError } from "../errors/agent-error.js";
import type { ToolCall, ToolResult } from "../models/messages.js";
import type { AnyTool } from "../tools/define-tool.js";
import { decode, encode } from "./codec.js";
import type { RunClock } from "./run-clock.js";
import type { SecretSealer } from "../record/sealed-secrets.js";

/** A step's output as DBOS keeps it (`operation_outputs`): its secrets sealed (record/sealed-secrets.ts). */
export interface StepCodec {
  encode(value: unknown): string;
  decode<T>(text: string): T;
}

/** The codec of a run's steps: encode then seal; unseal then decode. */
export function sealedCodec(sealer: SecretSealer): StepCodec {
  return { encode: (value) => sealer.seal(encode(value)), decode: <T>(text: string) => decode<T>(sealer.unseal(text)) };
}

/**
 * What a step recorded: its output or error, what it reported while it ran (replayed in order), the run's time when
 * it ended, and whether the deadline had cut it short (the engine had left its state: its output was dropped).
 */
interface Recorded {
  ok: boolean;
  value?: unknown;
  error?: unknown;
  reports: WorkEvent[];
  at: number;
  cut?: boolean;
}

function inWorkflow(what: string): void {
  // Outside a workflow DBOS.runStep would just call the function, silently journaling nothing.
  if (!DBOS.isWithinWorkflow()) throw new AgentError("ENGINE_FAILED", `statecraft/dbos: ${what} ran outside its DBOS workflow (the workflow's context was lost); nothing of it would be recorded`);
}

/**
 * One effect as one DBOS step. The first execution runs it, reporting live, and records its output (or error) with
 * the reports; a replay gets the record back from the database without running anything, and the reports are
 * played to the engine in the same order. Errors are recorded as values: the engine branches on their codes.
 */
async function step<T>(
  codec: StepCodec,
  name: string,
  clock: RunClock,
  signal: AbortSignal,
  report: Report,
  run: (report: Report) => Promise<T>,
  keep: (value: T) => unknown = (v) => v,
): Promise<T> {
  inWorkflow(name);
  let ranHere = false;
  const text = await DBOS.runStep(
    async () => {
      ranHere = true;
      clock.live();
      const reports: WorkEvent[] = [];
      const live: Report = (event) => {
        // What is reported once the engine left the state is dropped by it: not recorded either.
        if (signal.aborted) return;
        reports.push(event);
        report(event);
      };
      const end = (fields: Pick<Recorded, "ok" | "value" | "error">) => codec.encode({ ...fields, reports, at: clock.now(), ...(signal.aborted ? { cut: true } : {}) } satisfies Recorded);
      try {
        return end({ ok: true, value: keep(await run(live)) });
      } catch (error) {
        return end({ ok: false, error: error instanceof Error ? error : new AgentError("ENGINE_FAILED", String(error)) });
      }
    },
    { name },
  );
  const recorded = codec.decode<Recorded>(text);
  if (!ranHere) {
    for (const event of recorded.reports) report(event);
    clock.recorded(recorded.at);
    // The first time, the deadline left the state while this ran: it fires at the same point now, and the engine
    // leaves the state again (cancelling this, which never answers).
    if (recorded.cut) {
      clock.expire();
      return new Promise<T>(() => {});
    }
  }
  if (!recorded.ok) throw recorded.error;
  return recorded.value as T;
}

/**
 * A hook run as a step of its own (afterToolCall runs after its tool's step): once per call, and a replay gets its
 * recorded answer, or its recorded failure, back without calling it.
 */
async function hookStep<T>(codec: StepCodec, name: string, run: () => T | Promise<T>): Promise<T> {
  inWorkflow(name);
  const text = await DBOS.runStep(
    async () => {
      try {
        return codec.encode({ ok: true, value: (await run()) ?? null });
      } catch (error) {
        return codec.encode({ ok: false, message: error instanceof Error ? error.message : String(error) });
      }
    },
    { name },
  );
  const recorded = codec.decode<{ ok: boolean; value?: T | null; message?: string }>(text);
  if (!recorded.ok) throw new Error(recorded.message);
  return (recorded.value ?? undefined) as T;
}

/** Where a tool call that started is marked before it runs: a crash mid-tool leaves the mark (docs/scale-out.md). */
export interface ToolStarts {
  mark(workflowId: string, callId: string): Promise<boolean>;
}

export function toolStarts(pool: pg.Pool): ToolStarts {
  return {
    async mark(workflowId, callId) {
      const inserted = await pool.query("INSERT INTO statecraft.tool_starts (workflow_id, call_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", [workflowId, callId]);
      return inserted.rowCount === 0;
    },
  };
}

/**
 * The engine's effects as DBOS steps: the context built, each model call, each permission step and each tool call
 * (its output kept as the step's), and each recovery decision. A tool call marks itself started (a row) before it
 * runs; found started by a replay (its process died mid-call), a `read` tool runs again and a `write`/`exec` tool does
 * not: the model gets `INTERRUPTED`, as in docs/durable.md.
 */
export function stepEffects(options: { workflowId: string; starts: ToolStarts; clock: RunClock; codec: StepCodec }): Effects {
  const { workflowId, starts, clock, codec } = options;
  const wrapTool = (tool: AnyTool): AnyTool => ({
    ...tool,
    execute: (input, context) =>
      step(codec, `tool:${tool.name}`, clock, context.signal, () => undefined, async () => {
        const seenBefore = await starts.mark(workflowId, context.toolCallId);
        if (seenBefore && tool.risk !== "read") {
          // The same error result as a crash-resumed run's (docs/durable.md), not a thrown error: the model reads it.
          return {
            content:
              `INTERRUPTED: ${tool.name} had started when the worker running it died, and did not finish; its outcome is unknown ` +
              `(it may have done some or all of its work). Check the state it acts on before calling it again.`,
            isError: true,
          };
        }
        return tool.execute(input, context);
      }),
  });
  return {
    buildContext: (input, signal, report) =>
      // The model is code, not data: a hook may not change it (the policy is the run's own, made with its settings).
      step(codec, "buildContext", clock, signal, report, (live) => defaultEffects.buildContext(input, signal, live), ({ model, ...data }) => {
        // A model is code: a replay could not make the one a hook returned again.
        if (model !== undefined) throw new AgentError("HOOK_FAILED", "hook prepareNextTurn failed: it can't change the model on a worker (a replayed run could not make that model again); choose the model in createWorker's model function, from the run's options");
        return data;
      }).then(async (built) => {
        // A replayed step does not run buildContext, which waits for the policy's bash parser on a first build.
        if (input.first) await input.policy.ready;
        return built;
      }),
    callModel: (input, signal, report) => step(codec, "callModel", clock, signal, report, (live) => defaultEffects.callModel(input, signal, live)),
    askPermission: (input, signal, report) => step(codec, "askPermission", clock, signal, report, (live) => defaultEffects.askPermission(input, signal, live)),
    runTools: (input, signal, report) => {
      const after = input.afterToolCall;
      return defaultEffects.runTools(
        { ...input, calls: input.calls.map((c) => ({ ...c, tool: wrapTool(c.tool) })), ...(after ? { afterToolCall: (call: ToolCall, result: ToolResult) => hookStep(codec, "afterToolCall", () => after(call, result)) } : {}) },
        signal,
        report,
      );
    },
    decideRecovery: (input, signal, report) => step(codec, "decideRecovery", clock, signal, report, (live) => defaultEffects.decideRecovery(input, signal, live)),
  };
}

/** Tool-call ids a replay makes again: derived from the workflow and a counter, in the engine's `call_<20 hex>` form. */
export function replayableCallIds(workflowId: string): () => string {
  let n = 0;
  return () => `call_${createHash("sha256").update(`${workflowId}\u0000${n++}`).digest("hex").slice(0, 20)}`;
}
