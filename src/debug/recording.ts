import { existsSync, readFileSync } from "node:fs";
import type { ErrorInfo } from "../errors/agent-error.js";
import { ENGINE_STATES } from "../record/engine-states.js";
import type { StateTraceLine, AnyTraceLine } from "../record/format.js";
import { transcriptPath } from "../record/transcript.js";
import { contentText, type ContentPart } from "../models/content.js";
import { liveLines, reentries } from "./gaps.js";
import type { RecordedTool, RecordedOptions, RecordedRawCall, RecordedResponse, RecordedModelCall, RecordedCall, RecordedBatch, RunProblem, RecordedRun } from "./recorded-run.js";

export type { RecordedTool, RecordedOptions, RecordedRawCall, RecordedResponse, ModelCallOutcome, ModelCallStreamEntry, RecordedModelCall, RecordedResult, RecordedPermission, RecordedCall, RecordedBatch, RunProblem, RecordedRun } from "./recorded-run.js";

const STATES: ReadonlySet<string> = new Set(ENGINE_STATES);
const MODEL_STATES: ReadonlySet<string> = new Set(["call_model", "stream_text"]);

export const detailsOf = (line: AnyTraceLine): Record<string, unknown> =>
  ((line as { details?: unknown }).details as Record<string, unknown> | undefined) ?? {};

export function isState(line: AnyTraceLine | undefined, state?: string): line is StateTraceLine {
  return !!line && line.kind === "state" && (state === undefined || (line as StateTraceLine).state === state);
}

/** Reads a run's lines (in file order) into model calls, tool batches and the run's options; notes the first problem. */
export function analyseRun(lines: AnyTraceLine[], index = 0): RecordedRun {
  const run: RecordedRun = { index, lines, input: "", modelCalls: [], batches: [] };
  run.problem = structuralProblem(lines);
  const first = lines[0];
  if (isState(first, "build_context")) {
    run.build = first;
    const details = detailsOf(first);
    run.input = typeof details.input === "string" ? details.input : "";
    if (Array.isArray(details.input)) {
      run.inputParts = details.input as unknown[];
      run.input = contentText(details.input.filter((p): p is ContentPart => p !== null && typeof p === "object"));
    }
    const options = readOptions(details.options);
    if (typeof options === "string") run.problem ??= { seq: first.seq, kind: "bad_options", message: options };
    else run.options = options;
  }
  const byId = new Map<string, RecordedCall>();
  let current: RecordedModelCall | undefined;
  // Across a durable run's gaps (gaps.ts): the dead process's lines after its checkpoint are not the run's; a model
  // call the resumed run makes again is the same call.
  const live = liveLines(lines);
  const repeated = reentries(live);
  const interrupted = new Set<string>();
  for (const line of live) {
    if (line.kind === "resumed" && (line as { recovered?: unknown }).recovered === true) {
      const ids = (line as { interrupted?: unknown }).interrupted;
      if (Array.isArray(ids)) for (const id of ids) if (typeof id === "string") interrupted.add(id);
    }
    if (line.kind === "retry") {
      const retry = line as unknown as { attempt?: unknown; delayMs?: unknown; error?: { code?: unknown; message?: unknown } };
      current?.stream.push({
        type: "retry",
        attempt: typeof retry.attempt === "number" ? retry.attempt : 1,
        delayMs: typeof retry.delayMs === "number" ? retry.delayMs : 0,
        error: { code: String(retry.error?.code ?? "MODEL_ERROR"), message: String(retry.error?.message ?? "") },
        seq: line.seq,
      });
      continue;
    }
    if (!isState(line)) continue;
    const details = detailsOf(line);
    if (line.state === "call_model" && repeated.has(line)) {
      // Made again after a crash: its response (or error) follows, for the call the dead process had started.
    } else if (line.state === "call_model") {
      current = {
        index: run.modelCalls.length,
        turn: line.turn,
        seq: line.seq,
        ...(typeof details.messages === "number" ? { messages: details.messages } : {}),
        stream: [],
        outcome: { kind: "unknown" },
      };
      run.modelCalls.push(current);
    } else if (line.state === "stream_text") {
      current?.stream.push({ type: "text", seq: line.seq });
    } else if (current && !MODEL_STATES.has(line.state)) {
      // The line with the response may be missing (a damaged trace): validate_tool's calls still tell what was asked.
      const response = readResponse(details.response) ?? (line.state === "validate_tool" ? inferredResponse(details.calls) : undefined);
      const error = readError(details.error);
      if (response) {
        current.outcome = { kind: "response", response, seq: line.seq };
        if (response.toolCalls.length > 0) {
          const batch: RecordedBatch = {
            callIndex: current.index,
            turn: current.turn,
            seq: line.seq,
            calls: response.toolCalls.map((raw, position) => ({
              position,
              ...(raw.id !== undefined ? { id: raw.id } : {}),
              name: raw.name,
              arguments: raw.arguments,
              ...(raw.providerId !== undefined ? { providerId: raw.providerId } : {}),
              hasInput: false,
              ran: false,
            })),
          };
          run.batches.push(batch);
          for (const call of batch.calls) if (call.id !== undefined) byId.set(call.id, call);
        }
      } else if (line.state === "recover" && error) {
        current.outcome = { kind: "error", error, seq: line.seq };
      } else if (line.state === "done") {
        current.outcome = { kind: "cut", seq: line.seq, ...(current.stream.some((e) => e.type === "text") && typeof details.text === "string" ? { text: details.text } : {}) };
      }
      current = undefined;
    }
    if (line.state === "validate_tool" && Array.isArray(details.calls)) {
      for (const entry of details.calls as Array<{ id?: unknown; input?: unknown }>) {
        const call = typeof entry?.id === "string" ? byId.get(entry.id) : undefined;
        if (call) {
          call.input = entry.input;
          call.hasInput = true;
        }
      }
    }
    if (line.state === "execute_tool" && Array.isArray(details.run)) {
      for (const id of details.run) {
        const call = typeof id === "string" ? byId.get(id) : undefined;
        if (call) call.ran = true;
      }
    }
    if (Array.isArray(details.permissions)) {
      for (const entry of details.permissions as Array<Record<string, unknown>>) {
        const call = typeof entry?.toolCallId === "string" ? byId.get(entry.toolCallId) : undefined;
        if (!call || call.permission) continue;
        const decision = entry.decision;
        if (decision !== "allow" && decision !== "allow_always" && decision !== "deny") continue;
        call.permission = {
          decision,
          by: String(entry.by ?? "default"),
          ...(typeof entry.rule === "string" ? { rule: entry.rule } : {}),
          ...("input" in entry ? { input: entry.input } : {}),
          seq: line.seq,
        };
      }
    }
    if (Array.isArray(details.results)) {
      for (const entry of details.results as Array<Record<string, unknown>>) {
        const call = typeof entry?.toolCallId === "string" ? byId.get(entry.toolCallId) : undefined;
        if (!call || call.result) continue;
        const error = readError(entry.error);
        call.result = {
          content: typeof entry.content === "string" ? entry.content : "",
          isError: entry.isError === true,
          ...(Array.isArray(entry.parts) ? { parts: entry.parts as unknown[] } : {}),
          ...(entry.details !== null && typeof entry.details === "object" && !Array.isArray(entry.details) ? { details: entry.details as Record<string, unknown> } : {}),
          ...(typeof entry.durationMs === "number" ? { durationMs: entry.durationMs } : {}),
          ...(error ? { error } : {}),
          seq: line.seq,
          ...(typeof entry.durationMs !== "number" && interrupted.has(entry.toolCallId as string) ? { interrupted: true } : {}),
        };
      }
    }
    if (line.state === "done") run.done = line;
  }
  return run;
}

/**
 * The first place a run's lines stop reading as a run: it must start with build_context at seq 0, number its lines
 * 0, 1, 2… in file order, name only known states, and end with done.
 */
function structuralProblem(lines: readonly AnyTraceLine[]): RunProblem | undefined {
  const first = lines[0];
  if (!first || first.seq !== 0 || !isState(first, "build_context")) {
    return { seq: 0, kind: "no_build_context", message: "the run does not start with a build_context line at seq 0", ...(first ? { found: first } : {}) };
  }
  const present = new Set(lines.map((l) => l.seq));
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.seq !== i) {
      if (present.has(i)) {
        return { seq: i, kind: "order", message: `the line with seq ${i} comes after the line with seq ${line.seq} (lines out of order)`, found: line };
      }
      return { seq: i, kind: "missing", message: `the line with seq ${i} is missing (the next line has seq ${line.seq})`, found: line };
    }
    if (line.kind === "state") {
      const state = (line as { state?: unknown }).state;
      if (typeof state !== "string" || !STATES.has(state)) {
        return { seq: i, kind: "unknown_state", message: `unknown state ${JSON.stringify(state)} (known: ${ENGINE_STATES.join(", ")})`, found: line };
      }
      const details = (line as { details?: unknown }).details;
      if (typeof (line as { turn?: unknown }).turn !== "number" || details === null || typeof details !== "object") {
        return { seq: i, kind: "malformed", message: `the ${state} line lacks its "turn" or "details"`, found: line };
      }
    }
  }
  const last = lines[lines.length - 1];
  if (!isState(last, "done")) {
    return { seq: last.seq + 1, kind: "no_done", message: `the run ends at seq ${last.seq} without a done line (cut off by a crash, or still running)` };
  }
  return undefined;
}

function readOptions(value: unknown): RecordedOptions | string {
  if (value === null || typeof value !== "object") return "the build_context line has no options";
  const o = value as Record<string, unknown>;
  const number = (key: string, fallback: number) => (typeof o[key] === "number" ? (o[key] as number) : fallback);
  const optional = (key: string) => (typeof o[key] === "number" ? { [key]: o[key] as number } : {});
  const p = (o.permissions ?? {}) as Record<string, unknown>;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const tools: RecordedTool[] = [];
  for (const t of Array.isArray(o.tools) ? (o.tools as Array<Record<string, unknown>>) : []) {
    if (!t || typeof t.name !== "string") return "a tool of the recorded options has no name";
    const risk = t.risk === "write" || t.risk === "exec" ? t.risk : "read";
    tools.push({
      name: t.name,
      description: typeof t.description === "string" && t.description.trim() !== "" ? t.description : t.name,
      inputSchema: t.inputSchema && typeof t.inputSchema === "object" ? (t.inputSchema as Record<string, unknown>) : { type: "object" },
      risk,
      executionMode: t.executionMode === "sequential" || t.executionMode === "parallel" ? t.executionMode : risk === "read" ? "parallel" : "sequential",
      ...(typeof t.timeoutMs === "number" ? { timeoutMs: t.timeoutMs } : {}),
    });
  }
  return {
    ...(typeof o.model === "string" ? { model: o.model } : {}),
    maxTurns: number("maxTurns", 8),
    maxToolCalls: number("maxToolCalls", 12),
    timeoutMs: number("timeoutMs", 120_000),
    cwd: typeof o.cwd === "string" ? o.cwd : process.cwd(),
    ...(typeof o.systemPrompt === "string" ? { systemPrompt: o.systemPrompt } : {}),
    continued: o.continued === true,
    ...optional("contextWindow"),
    ...optional("reserveTokens"),
    ...optional("keepRecentTokens"),
    ...optional("maxRepeatedCalls"),
    ...optional("maxTokens"),
    ...optional("maxDelegationDepth"),
    ...(o.output !== null && typeof o.output === "object" && !Array.isArray(o.output) ? { output: o.output as Record<string, unknown> } : {}),
    ...optional("outputRetries"),
    hooks: strings(o.hooks),
    permissions: {
      mode: typeof p.mode === "string" ? p.mode : "default",
      allow: strings(p.allow),
      ask: strings(p.ask),
      deny: strings(p.deny),
      onAsk: p.onAsk === true,
      ...(p.whenUnanswered === "suspend" || p.whenUnanswered === "deny" ? { whenUnanswered: p.whenUnanswered } : {}),
      ...(p.onDeny === "continue" ? { onDeny: "continue" as const } : {}),
    },
    tools,
  };
}

/** A response rebuilt from validate_tool's calls when the line that carried it is missing (its text is unknown). */
function inferredResponse(calls: unknown): RecordedResponse | undefined {
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  const toolCalls: RecordedRawCall[] = [];
  for (const c of calls as Array<{ id?: unknown; name?: unknown; input?: unknown }>) {
    if (!c || typeof c.name !== "string") return undefined;
    toolCalls.push({ ...(typeof c.id === "string" ? { id: c.id } : {}), name: c.name, arguments: typeof c.input === "string" ? c.input : JSON.stringify(c.input ?? {}) });
  }
  return { text: "", toolCalls, finishReason: "tool_calls" };
}

function readResponse(value: unknown): RecordedResponse | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const r = value as Record<string, unknown>;
  const toolCalls: RecordedRawCall[] = [];
  for (const c of Array.isArray(r.toolCalls) ? (r.toolCalls as Array<Record<string, unknown>>) : []) {
    if (!c || typeof c.name !== "string") continue;
    const args = typeof c.arguments === "string" || (c.arguments && typeof c.arguments === "object") ? (c.arguments as string | Record<string, unknown>) : "";
    toolCalls.push({
      ...(typeof c.id === "string" ? { id: c.id } : {}),
      name: c.name,
      arguments: args,
      ...(typeof c.providerId === "string" ? { providerId: c.providerId } : {}),
    });
  }
  const usage = r.usage as RecordedResponse["usage"] | undefined;
  return {
    text: typeof r.text === "string" ? r.text : "",
    toolCalls,
    finishReason: typeof r.finishReason === "string" ? r.finishReason : toolCalls.length ? "tool_calls" : "stop",
    ...(usage && typeof usage === "object" && typeof usage.input === "number" && typeof usage.output === "number" ? { usage } : {}),
    ...(typeof r.thinking === "string" && r.thinking !== "" ? { thinking: r.thinking } : {}),
  };
}

export function readError(value: unknown): ErrorInfo | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const e = value as Record<string, unknown>;
  if (typeof e.code !== "string" || typeof e.message !== "string") return undefined;
  return { code: e.code, message: e.message, ...(typeof e.status === "number" ? { status: e.status } : {}) };
}

/** The number of compactions a run's lines record (call_model lines with `compaction`). */
export function compactionsIn(lines: readonly AnyTraceLine[]): number {
  return lines.filter((l) => isState(l, "call_model") && detailsOf(l).compaction !== undefined).length;
}

/**
 * The summary of each compaction of a session, in order. The trace records that a compaction happened and its sizes;
 * the summary text is taken from the line when a writer put it there, else from the session's transcript.
 */
export function compactionSummaries(lines: readonly AnyTraceLine[], cwd: string | undefined, sessionId: string): Array<string | undefined> {
  const fromTrace = lines
    .filter((l) => isState(l, "call_model") && detailsOf(l).compaction !== undefined)
    .map((l) => (detailsOf(l).compaction as { summary?: unknown }).summary)
    .map((summary) => (typeof summary === "string" ? summary : undefined));
  if (fromTrace.every((s) => s !== undefined) || cwd === undefined) return fromTrace;
  const file = transcriptPath(cwd, sessionId);
  if (!existsSync(file)) return fromTrace;
  const fromTranscript: string[] = [];
  for (const text of readFileSync(file, "utf8").split("\n")) {
    if (!text.includes('"compaction"')) continue;
    try {
      const entry = JSON.parse(text) as { type?: unknown; summary?: unknown };
      if (entry.type === "compaction" && typeof entry.summary === "string") fromTranscript.push(entry.summary);
    } catch {
      // a torn line: the transcript reader skips it too
    }
  }
  return fromTrace.map((s, i) => s ?? fromTranscript[i]);
}
