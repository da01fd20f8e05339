import { randomUUID } from "node:crypto";
import { DBOS, type DBOSClient } from "@dbos-inc/dbos-sdk";
import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import type { AgentEvent, RunResult } from "../events.js";
import type { AgentHooks } from "../hooks.js";
import type { Message } from "../models/messages.js";
import type { Model } from "../models/model.js";
import type { QueryOptions } from "../options.js";
import type { PermissionOptions } from "../permissions/types.js";
import { prepare, startRun, type RunSettings, type QueryRun } from "../query.js";
import { resumeRun } from "../resume.js";
import type { AnyTool } from "../tools/define-tool.js";
import { workspaceOf, type RunStore, type StoredRun } from "../durable/run-store.js";
import type { Logger } from "../logger.js";
import { decode, encode } from "./codec.js";
import { workflowIdOf, type RunSpec } from "./names.js";
import { PgLines } from "./pg-lines.js";
import { pgRunStore } from "./pg-run-store.js";
import type { RunKey } from "./run-key.js";
import { historyOf, pendingScope, sealHistory, specDigest } from "./sealed.js";
import { SealError, sealJson, unsealJson } from "../record/sealed-secrets.js";
import { narrowPermissions, type RunOptions } from "./run-options.js";
import { blockingRun, enqueuePiece, nextWaiting, specOfRow, specOfWaiting, withSession, type RunRow } from "./runs-table.js";
import { replayableCallIds, sealedCodec, stepEffects, toolStarts, type StepCodec } from "./step-effects.js";
import { RunClock } from "./run-clock.js";
import { sealingRules, sessionRules } from "./session-rules.js";
import { redactLine, secretValues } from "../record/redact.js";
import { defaultLogger } from "../logger.js";
import type { SandboxOption } from "../sandbox/index.js";
import type { AbortRequests } from "./abort-requests.js";
import { resumeToAbort } from "./abort.js";

/** What the workflow needs of the worker that runs it (one worker per process: DBOS is one per process). */
export interface WorkerHost {
  id: string;
  pool: pg.Pool;
  client: DBOSClient;
  model: Model | ((options: RunOptions & { sessionId: string; runId: string }) => Model);
  tools: readonly AnyTool[];
  cwd: string;
  permissions: Omit<PermissionOptions, "onAsk">;
  /** Signs what the worker trusts again from the database (the stored run, a session's conversation). */
  key: RunKey;
  hooks?: AgentHooks;
  logger?: Logger;
  /** Observers of every run the worker executes (statecraft/otel's, …). */
  observers?: QueryOptions["observers"];
  /** The sandbox of every run's processes (createWorker's `sandbox`). */
  sandbox?: SandboxOption;
  /** The abort requests (abortRun) of the runs it executes. */
  aborts: AbortRequests;
}

let host: WorkerHost | undefined;

export function setHost(next: WorkerHost | undefined): void {
  host = next;
}

/** How a piece of a run ended, the workflow's output. */
export type PieceOutcome =
  | { status: "waiting"; behind: string }
  | { status: "suspended"; pending: unknown[] }
  | { status: "finished"; reason: string };

/**
 * One piece of a queued run as a DBOS workflow: the run from its start (part 0) or from its suspension (part n, with
 * the answers), each effect a step (step-effects.ts), its lines and events written to PostgreSQL. It ends when the
 * run ends or suspends: a suspended run holds no worker slot, and answer() enqueues its next piece.
 */
export async function runPiece(queued: RunSpec): Promise<PieceOutcome> {
  const h = host;
  if (!h) throw new Error("statecraft/dbos: no worker in this process (createWorker() first)");
  const workflowId = DBOS.workflowID!;
  // Step outputs (DBOS's operation_outputs) hold the conversation, call inputs and the stored run: kept with their
  // secrets sealed under the run key, as statecraft.stored_runs is.
  const sealer = h.key.sealer(["step output", queued.runId]);
  const codec = sealedCodec(sealer);
  const sealedStep = (run: () => Promise<string>, name: string) => DBOS.runStep(async () => sealer.seal(await run()), { name }).then((text) => sealer.unseal(text));
  // The input and options were queued with their secrets sealed to the workers' key (enqueueRun): opened here, the
  // run gets them exactly; one that does not open (edited, sealed to another key) runs nothing.
  const opened = openSpec(h, queued);
  if (opened instanceof AgentError) {
    h.logger?.error({ sessionId: queued.sessionId, runId: queued.runId, code: opened.code }, `statecraft: run ${queued.runId} can't go on: ${opened.message}`);
    return decode<PieceOutcome>(await sealedStep(() => endRefused(h, queued, opened), "end"));
  }
  const spec = opened;
  const begun = decode<{ wait?: string; ended?: string; aborted?: boolean; history?: Message[]; rules?: string[]; now: number; workspace?: string }>(await sealedStep(() => begin(h, spec), "begin"));
  if (begun.wait !== undefined) return { status: "waiting", behind: begun.wait };
  // Aborted before a worker began it (abortRun ended it, its turn_end written): nothing of it runs.
  if (begun.ended !== undefined) return { status: "finished", reason: begun.ended };
  // A piece taken over from a worker that is gone replays that worker's steps: it goes on only in the same workspace
  // (its stored run and files are that workspace's), as a stored run resumes only where it was made.
  const here = workspaceOf(h.cwd);
  if (begun.workspace !== undefined && begun.workspace !== here) {
    const moved = new AgentError("RUN_DAMAGED", `run ${spec.runId} was begun by a worker of workspace ${begun.workspace} and can't go on in workspace ${here}: workers that take over each other's runs must share the workspace's real path (docs/scale-out.md)`);
    h.logger?.error({ sessionId: spec.sessionId, runId: spec.runId, code: moved.code }, `statecraft: ${moved.message}`);
    // Not a step: the steps recorded after `begin` are the other worker's, and this piece ends before any of them.
    return decode<PieceOutcome>(await endRefused(h, spec, moved));
  }

  const lines = new PgLines(h.pool, { sessionId: spec.sessionId, runId: spec.runId, part: spec.part }, (error) => h.logger?.error({ sessionId: spec.sessionId }, `statecraft: ${error.message}`));
  const permissions = narrowPermissions(h.permissions, spec.options.permissions);
  const remembered = begun.rules ?? [];
  const loaded: { run?: StoredRun } = {};
  const store = replayedLoads(codec, pgRunStore(h.pool, h.key, { runId: spec.runId, part: spec.part, spec: specDigest(queued), workspace: h.cwd, ...(spec.seen !== undefined ? { seen: spec.seen } : {}) }), loaded);
  // The run's time starts at the recorded start of this piece (less the time it was active before, for a resumption).
  const clock = new RunClock(begun.now);
  const { permissions: _rules, ...limits } = spec.options;
  const options: QueryOptions = {
    ...limits,
    model: typeof h.model === "function" ? h.model({ ...spec.options, sessionId: spec.sessionId, runId: spec.runId }) : h.model,
    tools: h.tools,
    cwd: h.cwd,
    permissions,
    runStore: store,
    sessionId: spec.sessionId,
    ...h.hooks,
    ...(h.logger ? { logger: h.logger } : {}),
    ...(h.observers ? { observers: h.observers } : {}),
    ...(h.sandbox !== undefined ? { sandbox: h.sandbox } : {}),
  };
  // A subagent (agentTool) runs inside its parent's tool step: its lines go to the database under its own session,
  // its trace lines carrying parentSession, as they would go to the parent's trace file and its own transcript.
  const children: PgLines[] = [];
  const hostSubagent = (prepared: unknown) => {
    const child = prepared as RunSettings;
    child.input.runId ??= randomUUID();
    const out = new PgLines(h.pool, { sessionId: child.input.sessionId, runId: child.input.runId, part: 0 }, (error) => h.logger?.error({ sessionId: child.input.sessionId }, `statecraft: ${error.message}`));
    children.push(out);
    child.hosted = { sinks: { trace: out.sink("trace"), transcript: out.sink("transcript"), audit: out.sink("audit") } };
    child.input.deps.hostSubagent = hostSubagent;
  };
  const hostRun = (prepared: RunSettings) => {
    prepared.hosted = {
      effects: stepEffects({ workflowId, starts: toolStarts(h.pool), clock, codec }),
      sinks: { trace: lines.sink("trace"), transcript: sealingRules(lines.sink("transcript"), lines.sink("rule"), h.key, spec.sessionId), audit: lines.sink("audit") },
      time: { machine: clock.machineOptions(), clock: clock.actorClock() },
    };
    prepared.input.startedAt = begun.now - (loaded.run?.activeMs ?? 0);
    prepared.input.deps.newCallId = replayableCallIds(workflowId);
    prepared.input.deps.hostSubagent = hostSubagent;
    // The session's remembered rules are the database's (read, signed, in the workflow's first step), not a local
    // transcript's.
    prepared.input.deps.policy!.addSessionRules(remembered);
    prepared.input.runId = spec.runId;
    if (spec.traceContext) prepared.input.traceContext = spec.traceContext;
  };
  let run: QueryRun;
  if (spec.part === 0) {
    const prepared = prepare(spec.input, options, { sessionId: spec.sessionId, ...(begun.history ? { history: begun.history } : {}) });
    hostRun(prepared);
    run = startRun(prepared, options);
  } else {
    run = resumeRun(spec.sessionId, { ...options, answers: spec.answers ?? {}, ...(spec.answeredBy !== undefined ? { answeredBy: spec.answeredBy } : {}) }, {}, undefined, hostRun);
  }
  const events = lines.sink("events");
  const secrets = secretValues();
  let result: RunResult | undefined;
  let refused: AgentError | undefined;
  // An abort asked for before the piece began stops it before its first state (a suspended run: before it asks
  // again); one asked for later reaches it within a poll, through the run's signal, as run.abort() does.
  if (begun.aborted) run.abort();
  const unwatch = h.aborts.watch(spec.runId, () => run.abort());
  try {
    for (;;) {
      const next = await run.next();
      if (next.done) {
        result = next.value;
        break;
      }
      // Redacted like the trace: the events sit in a database many can read.
      events.writeLine(redactLine(JSON.stringify(next.value satisfies AgentEvent), secrets));
    }
  } catch (error) {
    // A stored run that can't be trusted (or is gone) is not resumed: the run ends with that error, and the
    // session's next run may start. Anything else is the worker's trouble and fails the workflow as before.
    if (!(error instanceof AgentError) || (error.code !== "RUN_DAMAGED" && error.code !== "RUN_NOT_FOUND")) throw error;
    refused = error;
  } finally {
    unwatch();
    await Promise.all([lines.drain(), ...children.map((c) => c.drain())]);
  }
  if (refused) {
    const failure = refused;
    h.logger?.error({ sessionId: spec.sessionId, runId: spec.runId, code: failure.code }, `statecraft: run ${spec.runId} can't go on: ${failure.message}`);
    return decode<PieceOutcome>(await sealedStep(() => endRefused(h, spec, failure), "end"));
  }
  return decode<PieceOutcome>(await sealedStep(() => end(h, spec, result!), "end"));
}

/** The queued piece with its input and options unsealed, or why they can't be (RUN_DAMAGED). */
function openSpec(h: WorkerHost, queued: RunSpec): RunSpec | AgentError {
  try {
    const sealer = h.key.queueSealer([queued.sessionId, queued.runId]);
    return { ...queued, input: sealer.unseal(queued.input), options: unsealJson(sealer, queued.options) };
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    return new AgentError(
      "RUN_DAMAGED",
      `the queued input or options of run ${queued.runId} can't be opened: ${error.message}; nothing of it ran. Queue it again (enqueueRun), and keep the database's URL away from what agents run`,
    );
  }
}

/**
 * A run store whose loads are steps: a replayed resumption reads the stored run it read the first time. A load that
 * failed (RUN_DAMAGED) is recorded as that error, code and all.
 */
function replayedLoads(codec: StepCodec, store: RunStore, loaded: { run?: StoredRun }): RunStore {
  return {
    ...store,
    load: async (sessionId) => {
      const text = await DBOS.runStep(
        async () => {
          try {
            return codec.encode({ run: (await store.load(sessionId)) ?? null });
          } catch (error) {
            if (error instanceof AgentError) return codec.encode({ error });
            throw error;
          }
        },
        { name: "loadRun" },
      );
      const got = codec.decode<{ run?: StoredRun | null; error?: AgentError }>(text);
      if (got.error) throw got.error;
      loaded.run = got.run ?? undefined;
      return loaded.run;
    },
  };
}

/** The run starts (or waits behind the session's earlier run); a new run of a session goes on from its conversation. */
async function begin(h: WorkerHost, spec: RunSpec): Promise<string> {
  return withSession(h.pool, spec.sessionId, async (client) => {
    const row = (await client.query<RunRow>("SELECT * FROM statecraft.runs WHERE run_id = $1", [spec.runId])).rows[0];
    // Ended while it was queued (abortRun): its end is written, and the session's next run queued, already.
    if (row?.status === "finished") return encode({ ended: typeof row.result?.reason === "string" ? row.result.reason : "user_abort", now: Date.now() });
    if (spec.part === 0 && row) {
      const behind = await blockingRun(client, spec.sessionId, spec.runId, row.enqueued_at);
      if (behind !== undefined) {
        await client.query("UPDATE statecraft.runs SET status = 'waiting' WHERE run_id = $1", [spec.runId]);
        return encode({ wait: behind, now: Date.now() });
      }
    }
    await client.query("UPDATE statecraft.runs SET status = 'running', worker = $2, started_at = COALESCE(started_at, $3), part = $4 WHERE run_id = $1", [
      spec.runId,
      h.id,
      Date.now(),
      spec.part,
    ]);
    const rules = await sessionRules(client, h.key, spec.sessionId, h.logger ?? defaultLogger());
    const workspace = workspaceOf(h.cwd);
    const aborted = (await client.query("SELECT 1 FROM statecraft.aborts WHERE run_id = $1", [spec.runId])).rows.length > 0;
    if (spec.part > 0) return encode({ now: Date.now(), rules, workspace, ...(aborted ? { aborted } : {}) });
    const previous = (
      await client.query<{ run_id: string; messages: unknown }>(
        "SELECT run_id, messages FROM statecraft.runs WHERE session_id = $1 AND status = 'finished' AND messages IS NOT NULL ORDER BY ended_at DESC LIMIT 1",
        [spec.sessionId],
      )
    ).rows[0];
    if (!previous) return encode({ now: Date.now(), rules, workspace, ...(aborted ? { aborted } : {}) });
    // Only a conversation a worker signed is gone on from: the row is writable by anyone holding the database's URL.
    const history = historyOf(h.key, spec.sessionId, previous.run_id, previous.messages);
    if ("problem" in history) {
      (h.logger ?? defaultLogger()).warn(
        { sessionId: spec.sessionId, runId: spec.runId, from: previous.run_id },
        `statecraft: the conversation of run ${previous.run_id} in statecraft.runs is ignored: ${history.problem}; run ${spec.runId} starts the session's conversation afresh`,
      );
      return encode({ now: Date.now(), rules, workspace, ...(aborted ? { aborted } : {}) });
    }
    return encode({ now: Date.now(), rules, workspace, history: history.messages, ...(aborted ? { aborted } : {}) });
  });
}

/** The run could not go on (its stored run is damaged or gone): it is finished with that error, nothing of it run. */
async function endRefused(h: WorkerHost, spec: RunSpec, error: AgentError): Promise<string> {
  return withSession(h.pool, spec.sessionId, async (client) => {
    await client.query("UPDATE statecraft.runs SET status = 'finished', ended_at = $2, pending = NULL, result = $3 WHERE run_id = $1", [
      spec.runId,
      Date.now(),
      JSON.stringify({ error: { code: error.code, message: error.message } }),
    ]);
    await queueNextWaiting(h, client, spec);
    return encode({ status: "finished", reason: error.code } satisfies PieceOutcome);
  });
}

/** The piece ended: the run is suspended or finished; a finished run lets the session's next waiting run start. */
async function end(h: WorkerHost, spec: RunSpec, result: RunResult): Promise<string> {
  return withSession(h.pool, spec.sessionId, async (client) => {
    if (result.status === "suspended") {
      // What `statecraft runs` shows and answer() digests; its secrets sealed under the run key, as the stored run's.
      const pending = sealJson(h.key.sealer(pendingScope(spec.sessionId, spec.runId)), result.pending);
      await client.query("UPDATE statecraft.runs SET status = 'suspended', pending = $2 WHERE run_id = $1", [spec.runId, JSON.stringify(pending)]);
      // An abort asked for while the piece ran on to its question (too late for the worker to stop it): the run is
      // resumed to be stopped at once, as abortRun does with a suspended run. Decided under the session's lock, as
      // abortRun decides, so the request is acted on by one of the two.
      const aborted = (await client.query("SELECT 1 FROM statecraft.aborts WHERE run_id = $1", [spec.runId])).rows.length > 0;
      const row = aborted ? (await client.query<RunRow>("SELECT * FROM statecraft.runs WHERE run_id = $1", [spec.runId])).rows[0] : undefined;
      if (row) await resumeToAbort(h.client, client, { ...row, part: spec.part }, pending);
      return encode({ status: "suspended", pending } satisfies PieceOutcome);
    }
    const summary = { reason: result.reason, text: result.text, turns: result.turns, toolCalls: result.toolCalls, usage: result.usage, ...(result.error ? { error: result.error } : {}) };
    // The conversation a later run of the session goes on from, redacted as the file transcript is.
    const secrets = secretValues();
    await client.query("UPDATE statecraft.runs SET status = 'finished', ended_at = $2, pending = NULL, result = $3, messages = $4 WHERE run_id = $1", [
      spec.runId,
      Date.now(),
      redactLine(JSON.stringify(summary), secrets),
      sealHistory(h.key, spec.sessionId, spec.runId, redactLine(JSON.stringify(result.messages), secrets)),
    ]);
    await queueNextWaiting(h, client, spec);
    return encode({ status: "finished", reason: result.reason } satisfies PieceOutcome);
  });
}

/** A run of the session ended: the oldest run waiting behind it is queued. */
async function queueNextWaiting(h: WorkerHost, client: pg.PoolClient, spec: RunSpec): Promise<void> {
  const next = await nextWaiting(client, spec.sessionId);
  if (!next) return;
  await client.query("UPDATE statecraft.runs SET status = 'queued' WHERE run_id = $1", [next.run_id]);
  await enqueuePiece(h.client, client, specOfWaiting(next), workflowIdOf(spec));
}
