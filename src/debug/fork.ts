import { randomUUID } from "../util/node-crypto.js";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { userInputOf, type UserMessageInput } from "../models/input.js";
import { AgentError } from "../errors/agent-error.js";
import type { AssistantMessage, AssistantToolCall, Message, ToolMessage } from "../models/messages.js";
import type { ContentPart } from "../models/content.js";
import { fileBlobStore, type BlobStore } from "../record/blobs.js";
import { partsFromBlobs } from "../record/blob-parts.js";
import { hasRequest, requestOf, sessionBlobs } from "./blobs.js";
import type { Model, ModelStreamEvent } from "../models/model.js";
import { planCompaction, SUMMARY_PREFIX } from "../compaction/compact.js";
import { DEFAULT_KEEP_RECENT_TOKENS, type QueryOptions } from "../options.js";
import { prepare, startRun, type QueryRun } from "../query.js";
import { secretValues } from "../record/redact.js";
import type { AnyTraceLine } from "../record/format.js";
import { analyseRun, compactionsIn, compactionSummaries, detailsOf, isState, type RecordedBatch, type RecordedResponse, type RecordedRun } from "./recording.js";
import { splitRuns, type ForkPoint, type TraceSession } from "./session.js";
import { historyForModel, loadTranscript, transcriptPath } from "../record/transcript.js";
import { transcriptLines } from "../observers/transcript-writer.js";

export interface ForkOptions extends QueryOptions {
  /** The seq of the line to fork at: the fork continues from the conversation as it stood there. */
  at: number;
  /** The run of the session (1-based) `at` is in, when the session has several runs; default the last. */
  run?: number;
  /** A new user message after the rebuilt conversation; without it the conversation goes on as it stood. */
  prompt?: string;
}

/** The conversation at a point of a recorded run, and how a fork goes on from there. */
export interface ForkStart {
  /** The conversation as it stood (system prompt first when the run had one). */
  messages: Message[];
  /**
   * The point was inside a tool batch: the model's response that opened it (already recorded). A fork answers its
   * first model call with it, so that batch's calls are validated, decided and run again, live, under the fork's options.
   */
  pendingResponse?: RecordedResponse;
  /** The run the point is in (1-based). */
  run: number;
  /** The line at the point. */
  line: AnyTraceLine;
}

/**
 * Forks a recorded session: rebuilds the conversation as it stood at seq `at` and continues live as a new session
 * through the engine, with the given options (another model, system prompt, limits or permissions). Options not
 * given are the recorded run's (limits, system prompt, ask and deny rules), except the permission mode and allow
 * rules, which are never inherited, and the folder: the fork works in `cwd`, else `process.cwd()`, never in the
 * folder the trace names (a trace can come from anywhere; its `cwd` would choose what the fork's tools touch) (without `permissions` the mode is "default"); tools and the model must be
 * given (the trace holds their schemas, not their code). Every trace line of the fork carries `parentSession`, its
 * first line `forkedAt: { sessionId, seq }`; it is written to the session's trace file unless `traceFile` says
 * otherwise. Returns a run like `query()`'s. A point that can't be forked from is an `AgentError` (`INVALID_OPTIONS`).
 */
export function fork(session: TraceSession, options: ForkOptions): QueryRun {
  if (!options || typeof options !== "object") throw new AgentError("INVALID_OPTIONS", "fork(session, options): options are required, at least { at, model }");
  const cwd = resolve(options.cwd ?? process.cwd());
  const start = forkStart(session, options.at, options.run, cwd);
  const recorded = analyseRun(splitRuns(session.lines)[start.run - 1], start.run - 1).options;
  const prompt = options.prompt;
  if (prompt !== undefined && typeof prompt !== "string") throw new AgentError("INVALID_OPTIONS", "fork: prompt must be a string");
  const body = start.messages.filter((m) => m.role !== "system");
  const last = body[body.length - 1];
  if ((prompt === undefined || prompt === "") && last?.role === "assistant" && !start.pendingResponse) {
    throw new AgentError(
      "INVALID_OPTIONS",
      `at seq ${options.at} the run had ended with the model's answer; give a prompt to continue the conversation, or fork at an earlier seq`,
    );
  }
  const { at: _at, run: _run, prompt: _prompt, ...given } = options;
  const queryOptions: QueryOptions = {
    ...(recorded ? inheritedOptions(recorded) : {}),
    ...(session.file !== undefined ? { traceFile: resolve(session.file) } : {}),
    ...definedOnly(given),
    cwd,
    model: options.model,
  };
  if (start.pendingResponse) queryOptions.model = answerFirstWith(start.pendingResponse, options.model);
  const sessionId = options.sessionId ?? randomUUID();
  if (existsSync(transcriptPath(cwd, sessionId))) {
    throw new AgentError("INVALID_OPTIONS", `session ${sessionId} already exists in ${cwd}; a fork is a new session (leave sessionId out)`);
  }
  // Without a prompt the conversation goes on as it stood: when it ends with the request, that is the run's input;
  // otherwise the run adds no user message at all (an empty input with a given history).
  let history = body;
  let input: string | UserMessageInput = prompt ?? "";
  if (prompt === undefined && last?.role === "user") {
    history = body.slice(0, -1);
    input = userInputOf(last.content);
  }
  const forkedAt: ForkPoint = { sessionId: session.sessionId, seq: start.line.seq };
  if (splitRuns(session.lines).length > 1) forkedAt.run = start.run;
  const prepared = prepare(input, queryOptions, { sessionId, history, forkedAt, parentSession: session.sessionId });
  // The engine's transcript writer records what joins the conversation from the run's last built message on; what
  // the fork inherits goes on record first, so the fork session can be continued like any other.
  const inherited = input === "" ? history.slice(0, -1) : history;
  if (inherited.length > 0) {
    // Signed and redacted like the engine's transcript lines: the history may come from a transcript written unredacted.
    const out = transcriptLines({ cwd, sessionId, secrets: secretValues(), onError: () => {}, blobs: fileBlobStore(cwd) });
    const time = new Date().toISOString();
    for (const message of inherited) out.write({ type: "message", time, message });
    out.close();
  }
  return startRun(prepared, queryOptions);
}

/**
 * The conversation of a recorded session as it stood at seq `at` of run `run` (default the last run), rebuilt from
 * the trace the way the engine built it: the request, each model output, each tool result. The earlier conversation
 * of a continued or forked session comes from its earlier runs in the trace, else from its transcript in `cwd`'s
 * `.agent/sessions/` (default `process.cwd()`; never the folder the trace names).
 */
export function forkStart(session: TraceSession, at: number, run?: number, cwd: string = process.cwd()): ForkStart {
  const runs = splitRuns(session.lines);
  if (runs.length === 0) throw new AgentError("INVALID_OPTIONS", `session ${session.sessionId} has no lines`);
  const number = run ?? runs.length;
  if (!Number.isInteger(number) || number < 1 || number > runs.length) {
    throw new AgentError("INVALID_OPTIONS", `run must be a whole number from 1 to ${runs.length} (the session's runs), got ${JSON.stringify(run)}`);
  }
  const recorded = analyseRun(runs[number - 1], number - 1);
  const last = recorded.lines[recorded.lines.length - 1];
  if (typeof at !== "number" || !Number.isInteger(at) || at < 0) {
    throw new AgentError("INVALID_OPTIONS", `at must be the seq of a line (a whole number from 0 to ${last.seq}), got ${JSON.stringify(at)}`);
  }
  const index = recorded.lines.findIndex((l) => l.seq === at);
  if (index < 0) {
    throw new AgentError("INVALID_OPTIONS", `seq ${at} is not in ${runs.length > 1 ? `run ${number} of ` : ""}session ${session.sessionId} (its lines are seq 0 to ${last.seq})`);
  }
  if (recorded.problem && recorded.problem.kind !== "no_done" && recorded.problem.seq <= at) {
    throw new AgentError("INVALID_OPTIONS", `the trace can't be read up to seq ${at}: ${recorded.problem.message}`);
  }
  const summaries = compactionSummaries(session.lines, cwd, session.sessionId);
  const rebuild: Rebuild = { session, runs, summaries, cwd, blobs: sessionBlobs(session, cwd), summaryOffset: (i) => runs.slice(0, i).reduce((n, lines) => n + compactionsIn(lines), 0) };
  const initial = initialConversation(rebuild, number - 1, recorded);
  return { ...walk(rebuild, recorded, initial, index), run: number, line: recorded.lines[index] };
}

/** The options a fork inherits from the recorded run unless it is given its own. */
function inheritedOptions(o: NonNullable<RecordedRun["options"]>): Partial<QueryOptions> {
  return {
    maxTurns: o.maxTurns,
    maxToolCalls: o.maxToolCalls,
    timeoutMs: o.timeoutMs,
    ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}),
    // Only the rules that restrict: a trace can come from anywhere, and its recorded mode (bypassPermissions) or allow
    // rules would let the fork act without asking. The caller gives those, or the default mode applies.
    permissions: { ask: o.permissions.ask, deny: o.permissions.deny },
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** What rebuilding a session's conversation needs besides one run's lines. */
interface Rebuild {
  session: TraceSession;
  runs: AnyTraceLine[][];
  /** The folder the fork works in: where the session's transcript is looked for. */
  cwd: string;
  /** Where the trace's images and files are read back from. */
  blobs: BlobStore;
  /** Every compaction's summary in the session, in order (undefined where none is known). */
  summaries: Array<string | undefined>;
  /** How many compactions the runs before this one had. */
  summaryOffset: (run: number) => number;
}

/** The run's conversation before its first model call: the system prompt, what came before, the request. */
function initialConversation(rebuild: Rebuild, index: number, run: RecordedRun): Message[] {
  const { session, runs } = rebuild;
  const options = run.options;
  const system: Message[] = options?.systemPrompt ? [{ role: "system", content: options.systemPrompt }] : [];
  const forked = (run.lines[0] as { forkedAt?: unknown } | undefined)?.forkedAt !== undefined;
  // A fork without a prompt adds no user message of its own.
  const request: Message[] = hasRequest(run) ? [{ role: "user", content: requestOf(run, rebuild.blobs) }] : [];
  const firstCall = run.modelCalls[0];
  const claimed = firstCall ? claimedBy(run.lines[run.lines.findIndex((l) => l.seq === firstCall.seq)]).length : 0;
  const earlier = firstCall?.messages === undefined ? undefined : firstCall.messages - system.length - request.length - claimed;
  if (!options?.continued && !forked) return [...system, ...request];
  if (index > 0) {
    const previous = analyseRun(runs[index - 1], index - 1);
    try {
      const before = initialConversation(rebuild, index - 1, previous);
      const after = walk(rebuild, previous, before, previous.lines.length - 1).messages.filter((m) => m.role !== "system");
      const history = historyForModel(after);
      if (earlier === undefined || history.length === earlier) return [...system, ...history, ...request];
    } catch {
      // The earlier run can't be rebuilt from the trace: the transcript may still have it.
    }
  }
  const cwd = rebuild.cwd;
  const transcript = loadTranscript(cwd, session.sessionId).messages;
  if (earlier === undefined || transcript.length < earlier) {
    throw new AgentError(
      "INVALID_OPTIONS",
      `the conversation before run ${index + 1} of session ${session.sessionId} is not in this trace, and its transcript (${transcriptPath(cwd, session.sessionId)}) does not hold it; fork from the trace that has the session's earlier runs`,
    );
  }
  return [...system, ...historyForModel(transcript.slice(0, earlier)), ...request];
}

/**
 * Replays the engine's conversation bookkeeping over a run's lines up to `index`: a text answer joins on the line after
 * its model call, a response with tool calls on parse_tool_call, the batch's results on append_tool_result (or done),
 * text cut off by a stop on done.
 */
function walk(rebuild: Rebuild, run: RecordedRun, initial: Message[], index: number): Omit<ForkStart, "run" | "line"> {
  let messages = [...initial];
  let compactions = rebuild.summaryOffset(run.index);
  let open: { batch: RecordedBatch; at: number; response: RecordedResponse } | undefined;
  const batches = new Map(run.batches.map((b) => [b.seq, b]));
  let streamed = false;
  let previousState: AnyTraceLine | undefined;
  for (let i = 0; i <= index; i++) {
    const line = run.lines[i];
    if (!isState(line)) continue;
    const details = detailsOf(line);
    if (line.state === "build_context" && isState(previousState, "recover") && detailsOf(previousState).error) {
      // onModelError said continue: what was streamed is kept, cut off, and a note asks the model to go on.
      if (streamed) messages.push({ role: "assistant", content: PARTIAL_TEXT, cutOff: true });
      const failure = detailsOf(previousState).error as { message?: string };
      messages.push({ role: "user", content: `[The previous model request failed: ${failure.message ?? ""}. Continue from where you were.]` });
      streamed = false;
    }
    if (line.state === "call_model") {
      streamed = false;
      if (details.compaction !== undefined) {
        const summary = rebuild.summaries[compactions++];
        if (summary === undefined) {
          throw new AgentError("INVALID_OPTIONS", `the conversation was compacted at seq ${line.seq} and neither the trace nor the session's transcript holds the summary; fork at an earlier seq`);
        }
        messages = compacted(messages, summary, keepFor(run, previousState));
      }
      // Messages a session queued join the conversation just before the call (build_context takes them).
      for (const content of claimedBy(line)) messages.push({ role: "user", content });
    }
    if (line.state === "stream_text") streamed = true;
    const call = run.modelCalls.find((c) => c.outcome.kind === "response" && c.outcome.seq === line.seq);
    if (call && call.outcome.kind === "response") {
      const response = call.outcome.response;
      streamed = false;
      if (response.toolCalls.length === 0) {
        messages.push({ role: "assistant", content: response.text, ...(response.thinking ? { thinking: response.thinking } : {}) });
      } else {
        const batch = batches.get(line.seq)!;
        open = { batch, at: messages.length, response };
        messages.push(assistantWithCalls(response, batch));
      }
    }
    previousState = line;
    if ((line.state === "append_tool_result" || line.state === "done") && open) {
      if (line.state === "done" && streamed) pushCutOff(messages, details);
      for (const c of open.batch.calls) {
        const result = c.result && c.result.seq <= line.seq ? c.result : undefined;
        const message: ToolMessage = { role: "tool", toolCallId: c.id ?? `call_${c.position}`, name: c.name, content: result?.content ?? "Not run.", isError: result ? result.isError : true };
        // An image the tool returned, read back from the blob the line names.
        if (result?.parts) message.parts = partsFromBlobs(result.parts, rebuild.blobs, `the result of ${c.name} (seq ${result.seq})`) as ContentPart[];
        messages.push(message);
      }
      open = undefined;
    } else if (line.state === "done" && streamed) {
      pushCutOff(messages, details);
    }
  }
  if (open) return { messages: messages.slice(0, open.at), pendingResponse: open.response };
  const line = run.lines[index];
  if (isState(line, "done")) {
    const last = messages[messages.length - 1];
    // Text cut off by the stop is an unfinished answer: a fork asks again.
    if (last?.role === "assistant" && last.cutOff) messages.pop();
  }
  return { messages };
}

/** The conversation after a compaction, as build_context makes it: the summary, then the recent whole turns. */
function compacted(messages: Message[], summary: string, keep: number): Message[] {
  const system = messages[0]?.role === "system" ? messages[0] : undefined;
  const body = system ? messages.slice(1) : [...messages];
  const plan = planCompaction(body, keep);
  return [...(system ? [system] : []), { role: "user", content: SUMMARY_PREFIX + summary }, ...(plan ? plan.recent : body)];
}

/** How many recent tokens a compaction kept: keepRecentTokens, or less after a context overflow (half the window). */
function keepFor(run: RecordedRun, before: AnyTraceLine | undefined): number {
  const o = run.options;
  const keep = o?.keepRecentTokens ?? DEFAULT_KEEP_RECENT_TOKENS;
  // The build before this call followed a recover that handled an overflow.
  const lines = run.lines;
  const at = before ? lines.indexOf(before) : -1;
  const recover = [...lines.slice(0, at)].reverse().find((l) => l.kind === "state" && !isState(l, "build_context"));
  const overflow = isState(recover, "recover") && (detailsOf(recover).error as { code?: unknown } | undefined)?.code === "CONTEXT_OVERFLOW";
  if (!overflow) return keep;
  const half = o?.contextWindow ? Math.floor(o.contextWindow / 2) : keep;
  return Math.min(keep, half);
}

/** What a failed request streamed before a retry or a continue is not in the trace; that there was some is. */
const PARTIAL_TEXT = "(text streamed before the request failed; not in the trace)";

/** The queued messages a call_model line says the run took in just before the call. */
function claimedBy(line: AnyTraceLine | undefined): string[] {
  const claimed = line ? (detailsOf(line).claimed as { messages?: unknown } | undefined) : undefined;
  return Array.isArray(claimed?.messages) ? claimed.messages.filter((m): m is string => typeof m === "string") : [];
}

function pushCutOff(messages: Message[], details: Record<string, unknown>): void {
  if (typeof details.text === "string" && details.text !== "") messages.push({ role: "assistant", content: details.text, cutOff: true });
}

/** The assistant message parse_tool_call adds for a response with tool calls. */
function assistantWithCalls(response: RecordedResponse, batch: RecordedBatch): AssistantMessage {
  const toolCalls: AssistantToolCall[] = batch.calls.map((c) => {
    let input: unknown;
    if (typeof c.arguments === "string") {
      const text = c.arguments.trim();
      try {
        input = text === "" ? {} : (JSON.parse(text) as unknown);
      } catch {
        input = c.arguments;
      }
    } else {
      input = c.arguments;
    }
    const raw = typeof c.arguments === "string" && JSON.stringify(input) !== c.arguments ? { rawArguments: c.arguments } : {};
    return { id: c.id ?? `call_${c.position}`, name: c.name, input, ...raw, ...(c.providerId !== undefined ? { providerId: c.providerId } : {}) };
  });
  return { role: "assistant", content: response.text, toolCalls, ...(response.thinking ? { thinking: response.thinking } : {}) };
}

/** The live model, except that its first call is answered with the recorded response (the fork point was inside its batch). */
function answerFirstWith(response: RecordedResponse, live: Model): Model {
  if (!live || typeof live.stream !== "function") return live;
  let answered = false;
  return {
    name: live.name,
    ...(live.contextWindow !== undefined ? { contextWindow: live.contextWindow } : {}),
    stream(request, options) {
      if (answered) return live.stream(request, options);
      answered = true;
      return recordedStream(response);
    },
  };
}

async function* recordedStream(response: RecordedResponse): AsyncGenerator<ModelStreamEvent> {
  if (response.thinking) yield { type: "thinking_delta", text: response.thinking };
  if (response.text) yield { type: "text_delta", text: response.text };
  yield {
    type: "response",
    response: {
      text: response.text,
      toolCalls: response.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, ...(c.providerId !== undefined ? { providerId: c.providerId } : {}) })),
      finishReason: response.finishReason,
      ...(response.usage ? { usage: response.usage } : {}),
      ...(response.thinking ? { thinking: response.thinking } : {}),
    },
  };
}
