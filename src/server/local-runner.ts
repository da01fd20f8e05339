import { randomUUID } from "node:crypto";
import { contentText } from "../models/content.js";
import { resolve as resolvePath } from "node:path";
import type { Logger } from "../logger.js";
import type { AgentEvent } from "../events.js";
import type { Message } from "../models/messages.js";
import type { Model } from "../models/model.js";
import type { QueryOptions } from "../options.js";
import type { PermissionAnswer } from "../permissions/types.js";
import { prepare, startRun, type QueryRun } from "../query.js";
import { resume } from "../resume.js";
import { processMemoryStore } from "../durable/memory-store.js";
import type { StoredRun } from "../durable/run-store.js";
import { placeOf } from "../store-option.js";
import { loadTranscript, transcriptFromLines, transcriptPath } from "../record/transcript.js";
import type { AnyTool } from "../tools/define-tool.js";
import { existsSync } from "node:fs";
import { HttpProblem } from "./http-guard.js";
import { pump } from "./pump.js";
import { eventIds } from "./event-ids.js";
import { RunLog } from "./run-log.js";
import type { StartRequest } from "./run-request.js";
import type { Runner } from "./runner.js";

export interface LocalRunnerOptions {
  model: Model;
  tools: readonly AnyTool[];
  cwd: string;
  store: "file" | "memory";
  traceFile?: string | false;
  logger?: Logger;
}

/**
 * Runs in this process with `query()`: a permission question nobody can answer now suspends the run durably (in the
 * run store), and an answer resumes it with `resume()`, its events going on in the same log.
 */
export function localRunner(options: LocalRunnerOptions): Runner {
  const cwd = resolvePath(options.cwd);
  const logs = new Map<string, RunLog>();
  const bySession = new Map<string, RunLog[]>();
  const live = new Map<string, QueryRun>();
  const base = (): Pick<QueryOptions, "model" | "tools" | "cwd" | "store" | "logger"> => ({
    model: options.model,
    tools: options.tools,
    cwd,
    store: options.store,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  // A new run's trace file (a resumed run keeps the one it recorded).
  const trace: Pick<QueryOptions, "traceFile"> = options.traceFile !== undefined ? { traceFile: options.traceFile } : {};
  const ids = eventIds(cwd, options.store, (message) => options.logger?.warn({}, `statecraft: ${message}`));
  const follow = async (log: RunLog, run: QueryRun) => {
    live.set(log.runId, run);
    await pump(remembering(log, run), log, () => {
      if (live.get(log.runId) === run) live.delete(log.runId);
    });
  };
  /** The run's events, its `suspended` event's id kept before any client can have it: a server started again numbers on from it. */
  async function* remembering(log: RunLog, run: QueryRun): AsyncGenerator<AgentEvent, void, undefined> {
    for await (const event of run) {
      if (event.type === "suspended") ids.remember(log.runId, log.lastId + 1);
      yield event;
    }
  }
  const busy = (sessionId: string) => (bySession.get(sessionId) ?? []).find((log) => !log.ended);
  const add = (log: RunLog) => {
    logs.set(log.runId, log);
    bySession.set(log.sessionId, [...(bySession.get(log.sessionId) ?? []), log]);
  };
  const runs = placeOf({ store: options.store }, cwd).runs;
  /**
   * A run suspended in the run store that this process did not start (the server was restarted): its log starts at
   * its `suspended` event, and an answer resumes it as any other.
   */
  const restored = (stored: StoredRun | undefined): RunLog | undefined => {
    if (!stored || stored.status !== "suspended") return undefined;
    const known = logs.get(stored.runId);
    if (known) return known;
    const log = new RunLog(stored.runId, stored.sessionId, contentText(stored.settings.userInput), ids.suspendedAt(stored.runId) ?? 1);
    log.push({ type: "suspended", sessionId: stored.sessionId, runId: stored.runId, pending: stored.pending });
    add(log);
    return log;
  };
  const storedOf = async (sessionId: string) => (bySession.get(sessionId)?.some((log) => !log.ended) ? undefined : restored(await runs.load(sessionId)));

  return {
    async start(request: StartRequest) {
      await storedOf(request.sessionId);
      const other = busy(request.sessionId);
      if (other) {
        const why = other.status === "suspended" ? `waits for answers to ${other.pending?.map((c) => c.callId).join(", ")} (POST /runs/${other.runId}/answers)` : "is running";
        throw new HttpProblem(409, "SESSION_BUSY", `session ${request.sessionId} has run ${other.runId} that ${why}; wait for it to end, answer it, or abort it (POST /runs/${other.runId}/abort)`);
      }
      const runId = randomUUID();
      const queryOptions: QueryOptions = { ...base(), ...trace, ...request.options, sessionId: request.sessionId, permissions: { ...request.permissions, whenUnanswered: "suspend" } };
      const prepared = prepare(request.input, queryOptions);
      // The run's id is the engine's own (its trace lines and suspended event carry it).
      prepared.input.runId = runId;
      const log = new RunLog(runId, request.sessionId, request.input);
      add(log);
      try {
        await follow(log, startRun(prepared, queryOptions));
      } catch (error) {
        logs.delete(runId);
        bySession.set(request.sessionId, (bySession.get(request.sessionId) ?? []).filter((l) => l !== log));
        throw error;
      }
      return log;
    },
    async find(runId) {
      return logs.get(runId) ?? restored((await runs.list()).find((stored) => stored.runId === runId));
    },
    async answer(log, answers, answeredBy) {
      if (log.status !== "suspended" || live.has(log.runId)) throw notSuspended(log);
      const pending = (log.pending ?? []).map((c) => c.callId);
      const unknown = Object.keys(answers).filter((id) => !pending.includes(id));
      if (unknown.length > 0) throw new HttpProblem(400, "INVALID_REQUEST", `answers: ${unknown.map((id) => JSON.stringify(id)).join(", ")} ${unknown.length === 1 ? "is not a pending call" : "are not pending calls"} of run ${log.runId} (pending: ${pending.join(", ")})`);
      await follow(log, resume(log.sessionId, { ...base(), answers, answeredBy }));
    },
    async abort(log) {
      const run = live.get(log.runId);
      if (run) return void run.abort();
      if (log.status !== "suspended") throw new HttpProblem(409, "RUN_ENDED", `run ${log.runId} has ended (${log.reason ?? log.error?.code ?? "finished"}); there is nothing to abort`);
      // A suspended run is resumed and stopped at once: it ends user_abort, recorded, and its stored state goes.
      const resumed = resume(log.sessionId, { ...base() });
      resumed.abort();
      await follow(log, resumed);
    },
    async runsOf(sessionId) {
      await storedOf(sessionId);
      return [...(bySession.get(sessionId) ?? [])];
    },
    async messages(sessionId) {
      if (options.store === "memory") {
        const memory = processMemoryStore();
        if (!memory.hasTranscript(cwd, sessionId)) return bySession.has(sessionId) ? [] : undefined;
        return transcriptFromLines(memory.transcript(cwd, sessionId).lines, memory.allBlobs).messages as Message[];
      }
      if (!existsSync(transcriptPath(cwd, sessionId))) return bySession.has(sessionId) ? [] : undefined;
      return loadTranscript(cwd, sessionId, (message) => options.logger?.warn({ sessionId }, `statecraft: ${message}`)).messages as Message[];
    },
    async close() {
      for (const run of live.values()) run.abort();
      await Promise.all([...live.values()].map((run) => run.result.catch(() => undefined)));
    },
  };
}

function notSuspended(log: RunLog): HttpProblem {
  return new HttpProblem(409, "RUN_NOT_SUSPENDED", `run ${log.runId} is ${log.status === "suspended" ? "being resumed" : log.status}: only a run waiting at a permission question (status "suspended") takes answers`);
}
