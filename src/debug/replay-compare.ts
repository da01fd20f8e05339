import { isDeepStrictEqual } from "node:util";
import { withoutGaps } from "./gaps.js";
import type { RunUsage } from "../events.js";
import { type AnyTraceLine } from "../record/format.js";
import { analyseRun, detailsOf, isState, type RecordedRun } from "./recording.js";
import { partsToBlobs } from "../record/blob-parts.js";
import { hashOnlyBlobs } from "../record/blobs.js";
import type { ContentPart } from "../models/content.js";
import { describeLine, excerpt } from "./timeline.js";
import type { Divergence } from "./replay.js";
import type { RunOutcome } from "./replay-run.js";

// ——— comparison ———

const COMPARED_KINDS: ReadonlySet<string> = new Set(["state", "retry", "compaction"]);

export function compareRun(run: RecordedRun, outcome: RunOutcome, runCount: number, contextLines: number): Divergence | undefined {
  const runNumber = run.index + 1;
  const replayedAt = (seq: number) => outcome.lines.find((l) => l.seq === seq);
  const extra = (): string[] => [
    ...(runCount > 1 ? [`run ${runNumber} of ${runCount} in the session`] : []),
    ...(outcome.failure ? [`replay: ${outcome.failure}`] : []),
    ...outcome.notes.map((n) => `replay: ${n}`),
  ];
  if (run.problem) {
    const p = run.problem;
    // An unknown state is named as recorded, in the message's one format; what is wrong with it is the reason.
    const unknownState = (p.found as { state?: unknown } | undefined)?.state;
    const recorded =
      p.kind === "missing" ? "(missing line)" : p.kind === "no_done" ? "(end of recording)" : p.kind === "unknown_state" ? (typeof unknownState === "string" ? unknownState : JSON.stringify(unknownState)) : p.found ? labelOf(p.found) : "(missing line)";
    const replayedLine = replayedAt(p.seq);
    const replayed = replayedLine ? labelOf(replayedLine) : outcome.lines.length ? "(end of run)" : "(not replayed)";
    return divergenceAt(p.seq, runNumber, recorded, replayed, `the trace can't be read as a run: ${p.message}`, [
      ...contextOf(run.lines, outcome.lines, p.seq, contextLines),
      ...extra(),
    ]);
  }
  if (outcome.failure) {
    return divergenceAt(0, runNumber, labelOf(run.lines[0]), "(not replayed)", outcome.failure, extra());
  }
  const recordedLines = withoutGaps(run.lines).filter((l) => COMPARED_KINDS.has(l.kind));
  const replayedLines = outcome.lines;
  const recordedRefs = refsOf(run);
  const replayedRefs = refsOf(analyseRun(replayedLines, run.index));
  let firstDetail: { index: number; reason: string } | undefined;
  const length = Math.max(recordedLines.length, replayedLines.length);
  for (let i = 0; i < length; i++) {
    const r = recordedLines[i];
    const p = replayedLines[i];
    if (!p) {
      return divergenceAt(r.seq, runNumber, labelOf(r), "(end of run)", "the replay stopped before the recording did", [
        ...contextOf(run.lines, replayedLines, r.seq, contextLines),
        ...detailNote(firstDetail, recordedLines),
        ...extra(),
      ]);
    }
    if (!r) {
      const seq = recordedLines.length ? recordedLines[recordedLines.length - 1].seq + 1 : p.seq;
      return divergenceAt(seq, runNumber, "(end of recording)", labelOf(p), "the replay went on after the recording ended", [
        ...contextOf(run.lines, replayedLines, seq, contextLines),
        ...detailNote(firstDetail, recordedLines),
        ...extra(),
      ]);
    }
    const turnR = (r as { turn?: unknown }).turn;
    const turnP = (p as { turn?: unknown }).turn;
    if (labelOf(r) !== labelOf(p) || turnR !== turnP) {
      const reason = labelOf(r) !== labelOf(p) ? `the engine went to ${labelOf(p)} where the recording went to ${labelOf(r)}` : `turn ${String(turnP)} where the recording has turn ${String(turnR)}`;
      return divergenceAt(r.seq, runNumber, labelOf(r), labelOf(p), reason, [
        ...contextOf(run.lines, replayedLines, r.seq, contextLines),
        ...detailNote(firstDetail, recordedLines),
        ...extra(),
      ]);
    }
    if (!firstDetail) {
      const difference = detailDifference(normalise(r, recordedRefs), normalise(p, replayedRefs));
      if (difference) firstDetail = { index: i, reason: difference };
    }
  }
  if (firstDetail) {
    const r = recordedLines[firstDetail.index];
    const p = replayedLines[firstDetail.index];
    return divergenceAt(r.seq, runNumber, labelOf(r), labelOf(p), firstDetail.reason, [...contextOf(run.lines, replayedLines, r.seq, contextLines), ...extra()]);
  }
  return undefined;
}

export function divergenceAt(seq: number, run: number, recorded: string, replayed: string, reason: string, context: string[]): Divergence {
  return { seq, run, recorded, replayed, message: `diverged at seq ${seq}: recorded ${recorded}, replayed ${replayed}`, reason, context };
}

function detailNote(first: { index: number; reason: string } | undefined, recorded: AnyTraceLine[]): string[] {
  return first ? [`earlier, at seq ${recorded[first.index].seq}, the states matched but ${first.reason}`] : [];
}

function labelOf(line: AnyTraceLine): string {
  return isState(line) ? line.state : line.kind;
}

function contextOf(recorded: readonly AnyTraceLine[], replayed: readonly AnyTraceLine[], seq: number, count: number): string[] {
  const out: string[] = [];
  const window = (lines: readonly AnyTraceLine[]) => lines.filter((l) => l.seq >= seq - count && l.seq <= seq);
  for (const line of window(recorded)) out.push(`recorded ${describeLine(line)}`);
  for (const line of window(replayed)) out.push(`replayed ${describeLine(line)}`);
  return out;
}

/** Call ids → `model call.position`, so the recording's and the replay's (random) ids compare by position. */
function refsOf(run: RecordedRun): Map<string, string> {
  const refs = new Map<string, string>();
  for (const batch of run.batches) for (const call of batch.calls) if (call.id !== undefined) refs.set(call.id, `call ${batch.callIndex + 1}.${call.position + 1}`);
  return refs;
}

/** What of a line is compared: everything the engine decided, not times, durations or ids. */
function normalise(line: AnyTraceLine, refs: Map<string, string>): Record<string, unknown> {
  const ref = (id: unknown) => (typeof id === "string" ? (refs.get(id) ?? "(unknown call)") : id);
  if (line.kind === "retry") {
    const r = line as unknown as { attempt?: unknown; delayMs?: unknown; error?: { code?: unknown; message?: unknown } };
    return { attempt: r.attempt, delayMs: r.delayMs, error: { code: r.error?.code, message: r.error?.message } };
  }
  if (line.kind === "compaction") {
    const c = line as unknown as { tokensBefore?: unknown; tokensAfter?: unknown };
    return { tokensBefore: c.tokensBefore, tokensAfter: c.tokensAfter };
  }
  const d = detailsOf(line);
  const out: Record<string, unknown> = {};
  const list = (value: unknown) => (Array.isArray(value) ? (value as Array<Record<string, unknown>>) : undefined);
  if (isState(line, "build_context") && "input" in d) out.input = byHash(d.input);
  if ("messages" in d) out.messages = d.messages;
  if (d.claimed && typeof d.claimed === "object") {
    const claimed = d.claimed as { messages?: unknown };
    out.claimed = Array.isArray(claimed.messages) ? { ...claimed, messages: claimed.messages.map(byHash) } : claimed;
  }
  if (d.compaction && typeof d.compaction === "object") out.compaction = d.compaction;
  if (d.retry === true) out.retry = true;
  const response = d.response as Record<string, unknown> | undefined;
  if (response && typeof response === "object") {
    out.response = {
      text: response.text,
      toolCalls: list(response.toolCalls)?.map((c) => ({ name: c.name, arguments: c.arguments, providerId: c.providerId })),
      finishReason: response.finishReason,
      usage: response.usage,
      thinking: response.thinking,
    };
  }
  const calls = list(d.calls);
  if (calls) out.calls = calls.map((c) => (typeof c === "string" ? ref(c) : { call: ref(c.id), name: c.name, input: c.input }));
  const run = list(d.run);
  if (run) out.run = run.map(ref);
  const permissions = list(d.permissions);
  if (permissions) out.permissions = permissions.map((p) => ({ call: ref(p.toolCallId), name: p.name, decision: p.decision, by: p.by, rule: p.rule, input: p.input }));
  const results = list(d.results);
  if (results) {
    out.results = results.map((r) => ({
      call: ref(r.toolCallId),
      name: r.name,
      content: r.content,
      isError: r.isError,
      parts: byHash(r.parts),
      details: r.details,
      error: r.error ? { code: (r.error as { code?: unknown }).code, message: (r.error as { message?: unknown }).message } : undefined,
    }));
  }
  const errors = list(d.errors);
  if (errors) out.errors = errors.map((e) => ({ call: ref(e.toolCallId), name: e.name, code: e.code, message: e.message, fatal: e.fatal }));
  if (d.error && typeof d.error === "object") {
    const e = d.error as Record<string, unknown>;
    out.error = { code: e.code, message: e.message, status: e.status };
  }
  if (isState(line, "done")) {
    out.reason = d.reason;
    out.turns = d.turns;
    out.toolCalls = d.toolCalls;
    out.usage = usageOf(d.usage);
    out.text = d.text;
  }
  return out;
}

/**
 * Parts compared by what they hold: an image written inline (a replay's own lines, a trace kept in PostgreSQL) and one
 * named by hash are the same image when the hash is its bytes'.
 */
function byHash(value: unknown): unknown {
  return Array.isArray(value) ? partsToBlobs(value as ContentPart[], hashOnlyBlobs) : value;
}

function usageOf(value: unknown): RunUsage | undefined {
  if (!value || typeof value !== "object") return undefined;
  const u = value as Record<string, unknown>;
  const n = (x: unknown) => (typeof x === "number" ? x : 0);
  return { input: n(u.input), output: n(u.output), cached: n(u.cached), reasoning: n(u.reasoning) };
}

const FIELD_NAMES: Record<string, string> = {
  input: "the request",
  messages: "the number of messages sent to the model",
  claimed: "the queued messages taken in",
  compaction: "the compaction",
  retry: "the retried request",
  response: "the model's output",
  calls: "the tool calls",
  run: "the calls run",
  permissions: "the permission decisions",
  results: "the tool results",
  parts: "the result's parts",
  errors: "the errors",
  error: "the error",
  reason: "the stop reason",
  turns: "the turns",
  toolCalls: "the number of tool calls",
  usage: "the token usage",
  text: "the final text",
  attempt: "the retry attempt",
  delayMs: "the retry delay",
  tokensBefore: "the tokens before compaction",
  tokensAfter: "the tokens after compaction",
};

/** The first field that differs, in words with both values; undefined when the lines match. */
function detailDifference(recorded: Record<string, unknown>, replayed: Record<string, unknown>): string | undefined {
  const keys = [...new Set([...Object.keys(recorded), ...Object.keys(replayed)])];
  for (const key of keys) {
    const a = recorded[key];
    const b = replayed[key];
    if (isDeepStrictEqual(clean(a), clean(b))) continue;
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (isDeepStrictEqual(clean(a[i]), clean(b[i]))) continue;
        return `${FIELD_NAMES[key] ?? key} differ at item ${i + 1}: recorded ${show(a[i])}, replayed ${show(b[i])}`;
      }
    }
    return `${FIELD_NAMES[key] ?? key} differ: recorded ${show(a)}, replayed ${show(b)}`;
  }
  return undefined;
}

/** JSON's view of a value: undefined fields dropped, so `{ a: undefined }` equals `{}`. */
function clean(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

function show(value: unknown): string {
  return value === undefined ? "(nothing)" : excerpt(JSON.stringify(value) ?? "", 200);
}
