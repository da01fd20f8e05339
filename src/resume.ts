import { userInputOf } from "./models/input.js";
import { resolve } from "node:path";
import { AgentError } from "./errors/agent-error.js";
import type { AgentEvent, RunResult } from "./events.js";
import { checkOptionNames, QUERY_OPTION_NAMES, type QueryOptions } from "./options.js";
import type { PermissionAnswer, PermissionOptions } from "./permissions/types.js";
import { memoryOfRun, prepare, startRun, withRecords, withResult, type RunSettings, type QueryRun, type RunLifecycle } from "./query.js";
import { returned } from "./util/returned.js";
import type { Inbox } from "./machine/context.js";
import type { RunStore, StoredRun } from "./durable/run-store.js";
import { resumePointOf, storedMessages } from "./durable/stored-run.js";
import { checkSessionId, loadTranscript, transcriptFromLines } from "./record/transcript.js";
import { processMemoryStore } from "./durable/memory-store.js";
import { checkStoreOptions, placeOf } from "./store-option.js";
import { readTrace } from "./record/reader.js";

/** Options of `resume()`: query()'s (the recorded limits and settings apply unless given) plus the answers. */
export interface ResumeOptions extends Partial<Omit<QueryOptions, "model" | "sessionId">>, Pick<QueryOptions, "model"> {
  /** Answers to the pending calls, by call id. A pending call without one is asked again (`onAsk`) or suspends again. */
  answers?: Readonly<Record<string, PermissionAnswer>>;
  /** Who or where answered (free text), recorded with the answers in trace and audit. */
  answeredBy?: string;
}

const ANSWERS: readonly string[] = ["allow", "deny", "allow_always"];
const RESUME_OPTION_NAMES: readonly string[] = [...QUERY_OPTION_NAMES.filter((name) => name !== "sessionId"), "answers", "answeredBy"];

/**
 * Continues the suspended run of `sessionId` (docs/durable.md): the machine re-enters ask_permission with the stored
 * state, the answers are applied as if `onAsk` had given them (`by: "human"`), and the run goes on to its one
 * `turn_end` (or suspends again). Like a busy session, a run that can't be resumed makes the first `next()` reject:
 * `RUN_NOT_FOUND` (no suspended run), `RUN_BUSY` (another process resumes it), `RUN_DAMAGED` (the stored run can't be
 * trusted), `INVALID_OPTIONS` (an answer for a call that is not pending).
 */
export function resume(sessionId: string, options: ResumeOptions): QueryRun {
  return resumeRun(sessionId, options, {}, undefined, undefined, RESUME_OPTION_NAMES);
}

/** resume() as a session uses it: tied to the session's lifecycle, with messages it queued meanwhile. */
export function resumeRun(
  sessionId: string,
  options: ResumeOptions,
  lifecycle: RunLifecycle = {},
  queued?: () => Inbox,
  host?: (prepared: RunSettings) => void,
  optionNames?: readonly string[],
): QueryRun {
  const result = returned<RunResult>();
  const control: ResumeControl = { aborted: false, finished: result.resolve };
  const generator = run(sessionId, options, control, lifecycle, queued, host, optionNames) as QueryRun;
  withResult(generator, sessionId, result);
  withRecords(generator, options?.store, () => (control.inner ? memoryOfRun(control.inner) : undefined));
  generator.abort = () => {
    control.aborted = true;
    control.inner?.abort();
  };
  return generator;
}

interface ResumeControl {
  inner?: QueryRun;
  aborted: boolean;
  finished: (result: RunResult) => void;
}

async function* run(
  sessionId: string,
  options: ResumeOptions,
  control: ResumeControl,
  lifecycle: RunLifecycle,
  queued: (() => Inbox) | undefined,
  host: ((prepared: RunSettings) => void) | undefined,
  optionNames: readonly string[] | undefined,
): AsyncGenerator<AgentEvent, RunResult, undefined> {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", message);
  if (typeof sessionId !== "string") throw fail("resume(sessionId, options): sessionId must be a string");
  try {
    checkSessionId(sessionId);
  } catch (error) {
    throw fail(`resume(sessionId, options): ${(error as Error).message}`);
  }
  if (!options || typeof options !== "object") throw fail("resume(sessionId, options): options are required, at least { model }");
  // A session's resume passes its own options on (its queue modes among them): only resume() itself is checked.
  if (optionNames) checkOptionNames(options, optionNames, "resume()", { sessionId: "the session to resume is resume()'s first argument, resume(sessionId, options)" });
  const answers = options.answers ?? {};
  if (answers === null || typeof answers !== "object" || Array.isArray(answers)) throw fail('options.answers must be { [callId]: "allow" | "deny" | "allow_always" }');
  for (const [id, answer] of Object.entries(answers)) {
    if (!ANSWERS.includes(answer)) throw fail(`options.answers[${JSON.stringify(id)}] must be "allow", "deny" or "allow_always", got ${JSON.stringify(answer)}`);
  }
  if (options.answeredBy !== undefined && typeof options.answeredBy !== "string") throw fail("options.answeredBy must be a string (who or where answered)");
  const cwd = resolve(options.cwd ?? process.cwd());
  checkStoreOptions(options);
  const store: RunStore = placeOf(options, cwd).runs;
  const release = store.lock ? await store.lock(sessionId) : async () => {};
  let handedOver = false;
  try {
    const stored = await store.load(sessionId);
    if (!stored) {
      throw new AgentError("RUN_NOT_FOUND", `session ${sessionId} has no suspended or interrupted run in ${options.store === "memory" ? "this process's memory (store: \"memory\")" : options.runStore || typeof options.store === "object" ? "the given run store" : `${cwd}/.agent/runs`}; a finished run is not resumed (start a new query with sessionId to continue its conversation)`);
    }
    // A run whose process died while asking has its questions open in the batch.
    const recovered = stored.status === "running";
    const pendingIds = new Set(recovered ? stored.batch.filter((r) => r.status === "pending").map((r) => r.call.id) : stored.pending.map((c) => c.callId));
    for (const id of Object.keys(answers)) {
      if (!pendingIds.has(id)) throw fail(`options.answers: ${JSON.stringify(id)} is not a pending call of session ${sessionId} (pending: ${[...pendingIds].join(", ")})`);
    }
    const prepared = prepareResumed(stored, options, cwd);
    // The resumed run decides permissions synchronously from its first state on: the bash parser must be loaded.
    await prepared.input.deps.policy!.ready;

    const now = Date.now();
    const tools = prepared.input.deps.tools;
    const { point, interrupted } = resumePointOf(stored, answers, options.answeredBy, (name) => tools.get(name)?.risk);
    // After a crash the trace may hold lines written after the checkpoint: it goes on after its last line.
    const seq = recovered && prepared.traceFile && options.store !== "memory" ? await nextSeqOf(prepared.traceFile, sessionId, stored.traceSeq) : stored.traceSeq;
    prepared.resumed = {
      seq,
      fields: {
        runId: stored.runId,
        // The checkpoint's seq: the dead process's lines from it on are not part of the story (trace replay drops them).
        ...(recovered ? { recovered: true, interrupted, checkpoint: stored.traceSeq } : {}),
        answers,
        by: "human",
        ...(options.answeredBy !== undefined ? { answeredBy: options.answeredBy } : {}),
        afterMs: Math.max(0, now - Date.parse(stored.since)),
      },
      store,
      release,
      recovered,
    };
    // Only the time the run was active counts against timeoutMs: the deadline is what it had left, from now.
    prepared.input.startedAt = now - stored.activeMs;
    prepared.input.runId = stored.runId;
    prepared.input.resume = point;
    if (stored.traceContext) prepared.input.resumedFrom = stored.traceContext;
    const queryOptions = { ...options, cwd, sessionId } as QueryOptions;
    if (queued) {
      // Taken from the session only now that the run starts (a refused resume leaves them queued there).
      const more = queued();
      const inbox = prepared.input.inbox!;
      prepared.input.inbox = { steering: [...inbox.steering, ...more.steering], followUp: [...inbox.followUp, ...more.followUp] };
    }
    host?.(prepared);
    // build_context is not run again, so the session's remembered (signed) allow rules are added to the run's policy
    // here: from its transcript, or, for a hosted run, from where its host keeps them (the host added them).
    if (!prepared.hosted) {
      const warn = (message: string) => options.logger?.warn({ sessionId }, `statecraft: ${message}`);
      const remembered = options.store === "memory" ? transcriptFromLines(processMemoryStore().transcript(cwd, sessionId).lines, processMemoryStore().allBlobs) : loadTranscript(cwd, sessionId, warn);
      prepared.input.deps.policy!.addSessionRules(remembered.allowRules);
    }
    const inner = startRun(prepared, queryOptions, lifecycle);
    control.inner = inner;
    // The resumed run's result is known at its last event, as a query's is (QueryRun.result).
    inner.result.then(control.finished, () => undefined);
    handedOver = true;
    if (control.aborted) inner.abort();
    return yield* inner;
  } finally {
    if (!handedOver) await release();
  }
}

/** The run as it was started, with what resume() was given instead. */
function prepareResumed(stored: StoredRun, options: ResumeOptions, cwd: string): RunSettings {
  const s = stored.settings;
  // The recorded permission settings (signed with the run) apply, each unless resume() is given its own.
  const permissions: PermissionOptions = {
    mode: s.permissions.mode as PermissionOptions["mode"],
    allow: s.permissions.allow,
    ask: s.permissions.ask,
    deny: s.permissions.deny,
    ...(s.permissions.whenUnanswered ? { whenUnanswered: s.permissions.whenUnanswered } : {}),
    ...(s.permissions.onDeny === "continue" ? { onDeny: "continue" as const } : {}),
    ...stripUndefined(options.permissions ?? {}),
  };
  const merged: QueryOptions = {
    maxTurns: s.maxTurns,
    maxToolCalls: s.maxToolCalls,
    timeoutMs: s.timeoutMs,
    traceFile: s.traceFile,
    maxRepeatedCalls: s.maxRepeatedCalls,
    maxDelegationDepth: s.maxDelegationDepth,
    ...(s.systemPrompt !== undefined ? { systemPrompt: s.systemPrompt } : {}),
    ...(s.maxTokens !== undefined ? { maxTokens: s.maxTokens } : {}),
    ...(s.contextWindow !== undefined ? { contextWindow: s.contextWindow } : {}),
    ...(s.reserveTokens !== undefined ? { reserveTokens: s.reserveTokens } : {}),
    ...(s.keepRecentTokens !== undefined ? { keepRecentTokens: s.keepRecentTokens } : {}),
    // The answer's schema as recorded (a Standard Schema's JSON Schema), unless resume() is given its own.
    ...(s.output !== undefined ? { output: s.output, ...(s.outputRetries !== undefined ? { outputRetries: s.outputRetries } : {}) } : {}),
    ...stripUndefined(options),
    model: options.model,
    permissions,
    cwd,
    sessionId: stored.sessionId,
  };
  // A run kept in memory recorded its trace's default path; kept in memory again, it writes no file.
  if (options.store === "memory" && typeof merged.traceFile === "string") delete merged.traceFile;
  return prepare(userInputOf(s.userInput), merged, {
    sessionId: stored.sessionId,
    history: storedMessages(stored),
    inbox: { steering: [...stored.inbox.steering], followUp: [...stored.inbox.followUp] },
  });
}

/** The seq after the session's last line in the trace (at least `known`, the checkpoint's). */
async function nextSeqOf(file: string, sessionId: string, known: number): Promise<number> {
  let next = known;
  try {
    for await (const line of readTrace(file, { sessionId, onWarning: () => undefined, unknownKinds: true })) next = Math.max(next, line.seq + 1);
  } catch {
    // no trace, or one that can't be read: the checkpoint's seq
  }
  return next;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined && key !== "answers" && key !== "answeredBy") (out as Record<string, unknown>)[key] = v;
  return out;
}
