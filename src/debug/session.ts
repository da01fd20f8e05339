import { AgentError } from "../errors/agent-error.js";
import type { AnyTraceLine } from "../record/format.js";
import { readTrace, type ReadTraceOptions } from "../record/reader.js";
import { requestText } from "./request-text.js";

/** Where a forked session came from: the parent session and the seq of the parent's line it was forked at. */
export interface ForkPoint {
  sessionId: string;
  seq: number;
  /** The parent's run (1-based) the seq belongs to, when the parent session has several runs. */
  run?: number;
}

/** One session of a trace: its lines in file order. */
export interface TraceSession {
  sessionId: string;
  /** Set when the session was forked from another one (or is a subagent's): the session it came from. */
  parentSession?: string;
  /** Set on a fork: where it was forked. */
  forkedAt?: ForkPoint;
  lines: AnyTraceLine[];
  /** The file the session was read from (a fork writes there by default). */
  file?: string;
}

/** What `trace list` shows of a session, gathered in one streaming pass. */
export interface SessionSummary {
  sessionId: string;
  parentSession?: string;
  forkedAt?: ForkPoint;
  /** ISO time of the session's first line. */
  startedAt: string;
  /** ISO time of its last line. */
  endedAt: string;
  /** Runs of the session (a chat session or a continued one has several; each numbers its lines from seq 0). */
  runs: number;
  /** How the last run stopped; undefined when it has no `done` line (still running, or cut off by a crash). */
  reason?: string;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number; cached: number; reasoning: number };
  /** Summed over the runs that finished, plus the recorded span of one that did not. */
  durationMs: number;
  /** The first run's request. */
  request: string;
  model?: string;
  lines: number;
}

/**
 * Reads one session of a trace file: every line whose `sessionId` matches, in file order (lines of other sessions are
 * skipped without being kept). An id that matches no session exactly may be a unique prefix of one (the first
 * characters, as `trace list` prints them). An unknown or ambiguous id is an `AgentError` (`TRACE_SESSION_NOT_FOUND`).
 */
export async function loadSession(file: string, sessionId: string, options: Omit<ReadTraceOptions, "sessionId"> = {}): Promise<TraceSession> {
  if (typeof sessionId !== "string" || sessionId === "") {
    throw new AgentError("TRACE_SESSION_NOT_FOUND", "loadSession(file, sessionId): sessionId must be a non-empty string");
  }
  let lines = await collect(file, sessionId, options);
  let id = sessionId;
  if (lines.length === 0) {
    const candidates = new Set<string>();
    for await (const line of readTrace(file, { onWarning: () => {}, unknownKinds: true })) if (line.sessionId.startsWith(sessionId)) candidates.add(line.sessionId);
    if (candidates.size === 0) {
      throw new AgentError("TRACE_SESSION_NOT_FOUND", `no session ${sessionId} in ${file}; \`statecraft trace list ${file}\` shows its sessions`);
    }
    if (candidates.size > 1) {
      throw new AgentError(
        "TRACE_SESSION_NOT_FOUND",
        `${sessionId} is the start of ${candidates.size} sessions in ${file} (${[...candidates].slice(0, 5).join(", ")}${candidates.size > 5 ? ", …" : ""}); give more of the id`,
      );
    }
    id = [...candidates][0];
    lines = await collect(file, id, options);
  }
  return sessionOf(id, lines, file);
}

/** A session object from lines already in memory (all of one session, in file order). */
export function sessionOf(sessionId: string, lines: AnyTraceLine[], file?: string): TraceSession {
  const session: TraceSession = { sessionId, lines };
  const parent = lines.find((l) => typeof l.parentSession === "string")?.parentSession;
  if (parent !== undefined) session.parentSession = parent;
  const forked = lines.map((l) => (l as { forkedAt?: unknown }).forkedAt).find(isForkPoint);
  if (forked) session.forkedAt = forked;
  if (file !== undefined) session.file = file;
  return session;
}

/** The session that started last in the file (its latest run began after every other run), or undefined for an empty trace. */
export async function lastSessionId(file: string, options: Omit<ReadTraceOptions, "sessionId"> = {}): Promise<string | undefined> {
  let last: string | undefined;
  let lastAny: string | undefined;
  for await (const line of readTrace(file, { ...options, unknownKinds: true })) {
    lastAny = line.sessionId;
    if (line.seq === 0) last = line.sessionId;
  }
  return last ?? lastAny;
}

/** One summary per session, in the order the sessions first appear. Memory grows with the number of sessions, not lines. */
export async function summarizeSessions(file: string, options: Omit<ReadTraceOptions, "sessionId"> = {}): Promise<SessionSummary[]> {
  const sessions = new Map<string, Accumulator>();
  for await (const line of readTrace(file, { ...options, unknownKinds: true })) {
    let acc = sessions.get(line.sessionId);
    if (!acc) {
      acc = newAccumulator(line);
      sessions.set(line.sessionId, acc);
    }
    add(acc, line);
  }
  return [...sessions.values()].map(finish);
}

/**
 * Splits a session's lines into runs. Every run numbers its lines from seq 0 (a chat session, or a session continued
 * with `sessionId`, has one run per request), so a line with seq 0 starts a new run.
 */
export function splitRuns(lines: readonly AnyTraceLine[]): AnyTraceLine[][] {
  const runs: AnyTraceLine[][] = [];
  for (const line of lines) {
    if (line.seq === 0 || runs.length === 0) runs.push([]);
    runs[runs.length - 1].push(line);
  }
  return runs;
}

async function collect(file: string, sessionId: string, options: Omit<ReadTraceOptions, "sessionId">): Promise<AnyTraceLine[]> {
  const lines: AnyTraceLine[] = [];
  for await (const line of readTrace(file, { ...options, sessionId, unknownKinds: true })) lines.push(line);
  return lines;
}

function isForkPoint(value: unknown): value is ForkPoint {
  const v = value as ForkPoint | undefined;
  return !!v && typeof v === "object" && typeof v.sessionId === "string" && typeof v.seq === "number";
}

interface Accumulator {
  summary: SessionSummary;
  runStart?: number;
  runFinished: boolean;
  lastTime?: number;
  finishedMs: number;
}

function newAccumulator(line: AnyTraceLine): Accumulator {
  return {
    summary: {
      sessionId: line.sessionId,
      startedAt: line.time,
      endedAt: line.time,
      runs: 0,
      turns: 0,
      toolCalls: 0,
      tokens: { input: 0, output: 0, cached: 0, reasoning: 0 },
      durationMs: 0,
      request: "",
      lines: 0,
    },
    runFinished: false,
    finishedMs: 0,
  };
}

function add(acc: Accumulator, line: AnyTraceLine): void {
  const s = acc.summary;
  s.lines++;
  if (line.time) s.endedAt = line.time;
  const time = Date.parse(line.time);
  if (typeof line.parentSession === "string" && s.parentSession === undefined) s.parentSession = line.parentSession;
  const forked = (line as { forkedAt?: unknown }).forkedAt;
  if (isForkPoint(forked) && s.forkedAt === undefined) s.forkedAt = forked;
  if (line.seq === 0) {
    s.runs++;
    acc.runStart = Number.isNaN(time) ? undefined : time;
    acc.runFinished = false;
    // A new run has begun: until its done line, the session has no stop reason.
    delete s.reason;
  }
  if (!Number.isNaN(time)) acc.lastTime = time;
  if (line.kind !== "state") return;
  const details = ((line as { details?: unknown }).details ?? {}) as Record<string, unknown>;
  const state = (line as { state?: unknown }).state;
  if (state === "build_context" && line.seq === 0) {
    const request = requestText(details.input);
    if (s.runs === 1 && request !== undefined) s.request = request;
    const model = (details.options as { model?: unknown } | undefined)?.model;
    if (typeof model === "string") s.model = model;
  }
  if (state === "done") {
    if (typeof details.reason === "string") s.reason = details.reason;
    s.turns += num(details.turns);
    s.toolCalls += num(details.toolCalls);
    const usage = (details.usage ?? {}) as Record<string, unknown>;
    s.tokens.input += num(usage.input);
    s.tokens.output += num(usage.output);
    s.tokens.cached += num(usage.cached);
    s.tokens.reasoning += num(usage.reasoning);
    const duration = typeof details.durationMs === "number" ? details.durationMs : acc.runStart !== undefined && !Number.isNaN(time) ? time - acc.runStart : 0;
    acc.finishedMs += duration;
    acc.runFinished = true;
  }
}

function finish(acc: Accumulator): SessionSummary {
  const s = acc.summary;
  const running = !acc.runFinished && acc.runStart !== undefined && acc.lastTime !== undefined ? acc.lastTime - acc.runStart : 0;
  s.durationMs = Math.round(acc.finishedMs + running);
  return s;
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);
