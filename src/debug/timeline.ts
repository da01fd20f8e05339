import type { AnyTraceLine } from "../record/format.js";
import { detailsOf, isState } from "./recording.js";
import { requestText } from "./request-text.js";
import { splitRuns, type TraceSession } from "./session.js";

/** One line of the timeline: where the run was and what happened there. */
export interface TimelineEntry {
  seq: number;
  /** The run (1-based) the line belongs to. */
  run: number;
  /** Milliseconds since the run's first line. */
  offsetMs: number;
  /** The state entered, or the line's kind for other lines (`retry`, `compaction`, …). */
  state: string;
  turn: number;
  /** What happened, one item per fact: the model's text, each tool call, results, decisions, errors. */
  events: string[];
}

/** Where one run's time went and what each turn cost. */
export interface TimeSummary {
  /** Waiting for the model (call_model and stream_text). */
  modelMs: number;
  /** Running tools (execute_tool). */
  toolsMs: number;
  /** Waiting for a person to answer a permission question (ask_permission when someone was asked). */
  humanMs: number;
  /** Everything else: building the context, deciding permissions by rule, bookkeeping. */
  otherMs: number;
  totalMs: number;
}

export interface TurnTokens {
  turn: number;
  input: number;
  output: number;
  cached: number;
  reasoning: number;
}

export interface RunTimeline {
  run: number;
  request: string;
  reason?: string;
  entries: TimelineEntry[];
  time: TimeSummary;
  tokens: TurnTokens[];
}

export interface SessionTimeline {
  sessionId: string;
  parentSession?: string;
  forkedAt?: { sessionId: string; seq: number };
  runs: RunTimeline[];
}

const EXCERPT = 160;

/** The session as a timeline per run, with where the time went and tokens per turn. */
export function buildTimeline(session: TraceSession): SessionTimeline {
  const runs = splitRuns(session.lines).map((lines, i) => runTimeline(lines, i + 1));
  return {
    sessionId: session.sessionId,
    ...(session.parentSession !== undefined ? { parentSession: session.parentSession } : {}),
    ...(session.forkedAt ? { forkedAt: { sessionId: session.forkedAt.sessionId, seq: session.forkedAt.seq } } : {}),
    runs,
  };
}

function runTimeline(lines: AnyTraceLine[], run: number): RunTimeline {
  const start = timeOf(lines[0]);
  const entries: TimelineEntry[] = lines.map((line) => ({
    seq: line.seq,
    run,
    offsetMs: Math.max(0, timeOf(line) - start),
    state: isState(line) ? line.state : line.kind,
    turn: typeof (line as { turn?: unknown }).turn === "number" ? (line as { turn: number }).turn : 0,
    events: describeEvents(line),
  }));
  const first = lines[0];
  const done = lines.find((l) => isState(l, "done"));
  const request = (isState(first, "build_context") ? requestText(detailsOf(first).input) : undefined) ?? "";
  const reason = done ? detailsOf(done).reason : undefined;
  return {
    run,
    request,
    ...(typeof reason === "string" ? { reason } : {}),
    entries,
    time: timeSummary(lines),
    tokens: tokensPerTurn(lines),
  };
}

/** A one-line picture of a trace line: `seq 4 validate_tool (turn 1): call echo {"text":"x"}`. */
export function describeLine(line: AnyTraceLine): string {
  const name = isState(line) ? line.state : line.kind;
  const turn = typeof (line as { turn?: unknown }).turn === "number" ? ` (turn ${(line as { turn: number }).turn})` : "";
  const events = describeEvents(line);
  return `seq ${line.seq} ${name}${turn}${events.length ? `: ${events.join("; ")}` : ""}`;
}

/** A `suspended` or `resumed` line (docs/durable.md) in words. */
function describeGap(line: AnyTraceLine): string[] {
  const g = line as unknown as { pending?: Array<{ callId?: string; name?: string }>; answers?: Record<string, string>; by?: string; answeredBy?: string; afterMs?: number; recovered?: boolean; interrupted?: string[] };
  if (line.kind === "suspended") {
    const calls = (g.pending ?? []).map((c) => `${c.name ?? "?"} ${c.callId ?? ""}`.trim());
    return [`suspended: waiting for an answer to ${calls.length ? calls.join(", ") : "nothing"}`];
  }
  const after = typeof g.afterMs === "number" ? ` after ${formatGap(g.afterMs)}` : "";
  if (g.recovered) return [`recovered${after} (its process had died)${g.interrupted?.length ? `; interrupted: ${g.interrupted.join(", ")}` : ""}`];
  const answers = Object.entries(g.answers ?? {}).map(([id, answer]) => `${id} ${answer}`);
  return [`resumed${after}${answers.length ? `: ${answers.join(", ")}` : ""}${g.by ? ` by ${g.by}` : ""}${g.answeredBy ? ` (${excerpt(g.answeredBy)})` : ""}`];
}

function formatGap(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

/** What a line says happened, in words, one string per fact. */
export function describeEvents(line: AnyTraceLine): string[] {
  const out: string[] = [];
  if (line.kind === "retry") {
    const r = line as unknown as { attempt?: number; delayMs?: number; error?: { code?: string; message?: string } };
    out.push(`retry ${r.attempt ?? "?"} in ${r.delayMs ?? 0} ms after ${r.error?.code ?? "an error"}: ${excerpt(r.error?.message ?? "")}`);
    return out;
  }
  if (line.kind === "compaction") {
    const c = line as unknown as { tokensBefore?: number; tokensAfter?: number };
    out.push(`compaction: ${c.tokensBefore ?? "?"} → ${c.tokensAfter ?? "?"} tokens`);
    return out;
  }
  if (line.kind === "suspended" || line.kind === "resumed") return describeGap(line);
  if (!isState(line)) return out;
  const d = detailsOf(line);
  const forkedAt = (line as { forkedAt?: { sessionId?: string; seq?: number } }).forkedAt;
  if (forkedAt) out.push(`forked from ${forkedAt.sessionId} at seq ${forkedAt.seq}`);
  if (line.state === "build_context" && line.seq === 0) {
    const request = requestText(d.input);
    if (request !== undefined) out.push(request === "" && forkedAt ? "no new request: the conversation goes on" : `request: ${quote(request)}`);
    const o = d.options as Record<string, unknown> | undefined;
    if (o && typeof o === "object") {
      const tools = Array.isArray(o.tools) ? (o.tools as Array<{ name?: string }>).map((t) => t.name).join(", ") : "";
      const mode = (o.permissions as { mode?: string } | undefined)?.mode;
      out.push(
        `options: model ${String(o.model ?? "?")}, maxTurns ${String(o.maxTurns ?? "?")}, maxToolCalls ${String(o.maxToolCalls ?? "?")}, timeout ${String(o.timeoutMs ?? "?")} ms${mode ? `, permissions ${mode}` : ""}${tools ? `, tools ${tools}` : ""}`,
      );
    }
  }
  if (line.state === "call_model" && typeof d.messages === "number") out.push(`model call with ${d.messages} message${d.messages === 1 ? "" : "s"}`);
  if (line.state === "stream_text") out.push("text streaming");
  const response = d.response as { text?: string; toolCalls?: Array<{ name?: string; arguments?: unknown }>; finishReason?: string; usage?: { input?: number; output?: number }; thinking?: string } | undefined;
  if (response && typeof response === "object") {
    if (response.thinking) out.push(`thinking: ${quote(response.thinking)}`);
    if (response.text) out.push(`model: ${quote(response.text)}`);
    for (const call of response.toolCalls ?? []) out.push(`model calls ${call.name}(${excerpt(typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments))})`);
    const usage = response.usage ? `, ${response.usage.input ?? 0} in / ${response.usage.output ?? 0} out tokens` : "";
    out.push(`finish ${response.finishReason ?? "?"}${usage}`);
  }
  if (line.state === "validate_tool" && Array.isArray(d.calls)) {
    for (const c of d.calls as Array<{ name?: string; input?: unknown }>) out.push(`call ${c.name} ${excerpt(JSON.stringify(c.input) ?? "")}`);
  }
  if (line.state === "ask_permission" && Array.isArray(d.calls)) out.push(`deciding ${d.calls.length} call${d.calls.length === 1 ? "" : "s"}`);
  if (Array.isArray(d.permissions)) {
    for (const p of d.permissions as Array<{ name?: string; decision?: string; by?: string; rule?: string }>) {
      out.push(`${p.name}: ${p.decision} by ${p.by}${p.rule ? ` (rule ${p.rule})` : ""}`);
    }
  }
  if (line.state === "execute_tool" && Array.isArray(d.run)) out.push(`running ${d.run.length} call${d.run.length === 1 ? "" : "s"}`);
  if (Array.isArray(d.errors)) {
    for (const e of d.errors as Array<{ name?: string; code?: string; message?: string; fatal?: boolean }>) {
      out.push(`error ${e.name}: ${e.code}${e.fatal ? " (fatal)" : ""}: ${excerpt(e.message ?? "")}`);
    }
  }
  if (Array.isArray(d.results)) {
    for (const r of d.results as Array<{ name?: string; content?: string; isError?: boolean; durationMs?: number }>) {
      const took = typeof r.durationMs === "number" ? ` in ${formatMs(r.durationMs)}` : "";
      out.push(`${r.isError ? "error result" : "result"} ${r.name}${took}: ${quote(r.content ?? "")}`);
    }
  }
  const error = d.error as { code?: string; message?: string } | undefined;
  if (error && typeof error === "object" && line.state !== "done") out.push(`error ${error.code}: ${excerpt(error.message ?? "")}`);
  if (line.state === "done") {
    const usage = d.usage as { input?: number; output?: number } | undefined;
    out.push(
      `stopped: ${String(d.reason ?? "?")} after ${String(d.turns ?? "?")} turns, ${String(d.toolCalls ?? "?")} tool calls, ${usage?.input ?? 0} in / ${usage?.output ?? 0} out tokens${typeof d.durationMs === "number" ? `, ${formatMs(d.durationMs)}` : ""}`,
    );
    if (error && typeof error === "object") out.push(`error ${error.code}: ${excerpt(error.message ?? "")}`);
  }
  return out;
}

/**
 * Where the time went: each line's state lasts until the next line. Model time is call_model and stream_text;
 * tool time execute_tool; human time ask_permission when a person was asked (a decision `by: "human"` follows).
 */
export function timeSummary(lines: readonly AnyTraceLine[]): TimeSummary {
  const summary: TimeSummary = { modelMs: 0, toolsMs: 0, humanMs: 0, otherMs: 0, totalMs: 0 };
  if (lines.length === 0) return summary;
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i];
    const spent = Math.max(0, timeOf(lines[i + 1]) - timeOf(line));
    summary.totalMs += spent;
    const state = isState(line) ? line.state : line.kind;
    if (state === "call_model" || state === "stream_text" || state === "retry") summary.modelMs += spent;
    else if (state === "execute_tool") summary.toolsMs += spent;
    else if (state === "ask_permission" && askedHuman(lines, i)) summary.humanMs += spent;
    else summary.otherMs += spent;
  }
  return summary;
}

/** Tokens the model reported for each turn (from each response's usage). */
export function tokensPerTurn(lines: readonly AnyTraceLine[]): TurnTokens[] {
  const turns = new Map<number, TurnTokens>();
  for (const line of lines) {
    if (!isState(line)) continue;
    const usage = (detailsOf(line).response as { usage?: Record<string, unknown> } | undefined)?.usage;
    if (!usage) continue;
    const entry = turns.get(line.turn) ?? { turn: line.turn, input: 0, output: 0, cached: 0, reasoning: 0 };
    entry.input += num(usage.input);
    entry.output += num(usage.output);
    entry.cached += num(usage.cached);
    entry.reasoning += num(usage.reasoning);
    turns.set(line.turn, entry);
  }
  return [...turns.values()].sort((a, b) => a.turn - b.turn);
}

/** The timeline as text, for people. */
export function formatTimeline(timeline: SessionTimeline): string {
  const out: string[] = [`session ${timeline.sessionId}`];
  if (timeline.forkedAt) out.push(`forked from ${timeline.forkedAt.sessionId} at seq ${timeline.forkedAt.seq}`);
  else if (timeline.parentSession) out.push(`parent session ${timeline.parentSession}`);
  for (const run of timeline.runs) {
    out.push("");
    if (timeline.runs.length > 1) out.push(`run ${run.run} of ${timeline.runs.length}`);
    if (run.request) out.push(`request: ${quote(run.request, 400)}`);
    out.push(`${pad("seq", 5)} ${pad("time", 9)} ${pad("state", 19)} ${pad("turn", 4)}  what happened`);
    for (const entry of run.entries) {
      const head = `${pad(String(entry.seq), 5)} ${pad(`+${(entry.offsetMs / 1000).toFixed(3)}s`, 9)} ${pad(entry.state, 19)} ${pad(String(entry.turn), 4)}`;
      if (entry.events.length === 0) out.push(head);
      entry.events.forEach((event, i) => out.push(i === 0 ? `${head}  ${event}` : `${" ".repeat(head.length)}  ${event}`));
    }
    const t = run.time;
    out.push("");
    out.push(
      `time: ${formatMs(t.totalMs)} total: model ${formatMs(t.modelMs)} (${percent(t.modelMs, t.totalMs)}), tools ${formatMs(t.toolsMs)} (${percent(t.toolsMs, t.totalMs)}), waiting for a human ${formatMs(t.humanMs)} (${percent(t.humanMs, t.totalMs)}), other ${formatMs(t.otherMs)}`,
    );
    if (run.tokens.length > 0) {
      out.push("tokens per turn:");
      for (const turn of run.tokens) {
        out.push(`  turn ${turn.turn}: ${turn.input} in, ${turn.output} out${turn.cached ? `, ${turn.cached} cached` : ""}${turn.reasoning ? `, ${turn.reasoning} reasoning` : ""}`);
      }
      const total = run.tokens.reduce((sum, t) => ({ input: sum.input + t.input, output: sum.output + t.output }), { input: 0, output: 0 });
      out.push(`  total: ${total.input} in, ${total.output} out`);
    }
    out.push(run.reason ? `stopped: ${run.reason}` : "stopped: (no done line: the run was cut off or is still running)");
  }
  return out.join("\n");
}

function askedHuman(lines: readonly AnyTraceLine[], index: number): boolean {
  const next = lines[index + 1];
  if (!next) return false;
  const permissions = detailsOf(next).permissions;
  return Array.isArray(permissions) && (permissions as Array<{ by?: string }>).some((p) => p.by === "human");
}

function timeOf(line: AnyTraceLine | undefined): number {
  const t = line ? Date.parse(line.time) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

/** The start of a text on one line, quoted. */
export function quote(text: string, max = EXCERPT): string {
  return JSON.stringify(excerpt(text, max));
}

export function excerpt(text: string, max = EXCERPT): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

const percent = (part: number, total: number) => (total > 0 ? `${Math.round((part / total) * 100)}%` : "0%");
const pad = (text: string, width: number) => (text.length >= width ? text : text + " ".repeat(width - text.length));
const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);
