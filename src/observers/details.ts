import type { EngineContext } from "../machine/context.js";
import type { CallRecord } from "../machine/context.js";
import type { StateEntered } from "./observe.js";
import type { TracedRunOptions } from "../record/settings-record.js";
import { runSummary, type CompletedRunSummary } from "./run-summary.js";
import type { BlobStore } from "../record/blobs.js";
import { contentToBlobs, partsToBlobs } from "../record/blob-parts.js";
import type { UserContent } from "../models/content.js";

/**
 * Builds each state's trace details: what led into the state, enough for the trace alone to explain and replay the
 * run (docs/trace.md). A line holds what that step produced, never the whole context; each tool result appears on
 * exactly one line (the first one after it was known).
 */
export class TraceDetails {
  // The batch as the last line saw it. Records are values (an action replaces a record, never edits it), so a record
  // whose permission or result is new is told apart from the one the last line saw by comparing the two.
  private seen: readonly CallRecord[] = [];

  /**
   * `runOptions`: none for a run the inspector was not told about (its first line then carries `{}`). `blobs`: where
   * images and files go, the lines naming them by hash (record/blob-parts.ts); without it they are written inline.
   */
  constructor(
    private readonly runOptions: TracedRunOptions | Record<string, never> = {},
    private readonly blobs?: BlobStore,
  ) {}

  private content(content: UserContent): unknown {
    return this.blobs ? contentToBlobs(content, this.blobs) : content;
  }

  of(entered: StateEntered<EngineContext>): Record<string, unknown> {
    const { state, context, event } = entered;
    const details: Record<string, unknown> = {};
    // The run's request and options, once: on its first line. A later build_context (before each further model call)
    // carries what led into it, like any state: the model's answer when a queued message keeps the run going.
    if (state === "build_context" && entered.from === undefined) {
      details.input = this.content(context.run.userInput);
      details.options = this.runOptions;
      return details;
    }
    if (event.type === "callModel.done" && (entered.from === "call_model" || entered.from === "stream_text") && context.call.response) {
      const r = context.call.response;
      details.response = {
        text: r.text,
        toolCalls: r.toolCalls.map((raw, i) => {
          // Written out, not `{ ...{ id }, name, … }`: in V8 a spread copy given properties it lacks outlives the
          // scavenges (bench/notes.md, "Promoted bytes"). Same keys, same order.
          const id = state !== "done" && context.batch[i]?.raw === raw ? context.batch[i].call.id : undefined;
          const call: Record<string, unknown> = id === undefined ? { name: raw.name, arguments: raw.arguments } : { id, name: raw.name, arguments: raw.arguments };
          if (raw.providerId !== undefined) call.providerId = raw.providerId;
          return call;
        }),
        finishReason: r.finishReason,
        ...(r.usage ? { usage: r.usage } : {}),
        ...(r.thinking ? { thinking: r.thinking } : {}),
      };
    }
    switch (state) {
      case "call_model":
        details.messages = context.messages.length;
        if (context.inbox.claimed.length && entered.from === "build_context") {
          details.claimed = { source: context.inbox.claimedFrom, messages: context.inbox.claimed.map((m) => this.content(m.content)) };
        }
        if (entered.from === "build_context" && context.call.compaction && event.type === "buildContext.done") {
          details.compaction = { tokensBefore: context.call.compaction.tokensBefore, tokensAfter: context.call.compaction.tokensAfter, summary: context.call.compaction.summary };
        }
        if (entered.from === "recover") details.retry = true;
        break;
      case "validate_tool":
        details.calls = context.batch.map((r) => ({ id: r.call.id, name: r.call.name, input: r.call.input }));
        break;
      case "ask_permission":
        details.calls = context.batch.filter((r) => r.status === "pending").map((r) => r.call.id);
        break;
      case "execute_tool":
        details.run = context.batch.filter((r) => r.status === "allowed").map((r) => r.call.id);
        break;
      case "recover": {
        const errors = context.batch
          .filter((r) => r.error)
          .map((r) => ({ toolCallId: r.call.id, name: r.call.name, code: r.error!.code, message: r.error!.message, ...(r.fatal ? { fatal: true } : {}) }));
        if (errors.length) details.errors = errors;
        if (context.outcome.failure) details.error = context.outcome.failure.toJSON();
        break;
      }
      case "validate_output": {
        const { outputAttempts, outputErrors } = context.outcome;
        details.attempt = outputAttempts ?? 0;
        details.valid = outputErrors === undefined;
        if (outputErrors === undefined) details.output = context.outcome.output;
        else details.errors = outputErrors;
        break;
      }
      case "done": {
        // The run's summary, as turn_end and the RunResult give it (the line itself is redacted as a whole).
        const summary = runSummary(context, { time: entered.time }) as CompletedRunSummary;
        details.reason = summary.reason;
        if (summary.error) details.error = summary.error;
        details.turns = summary.turns;
        details.toolCalls = summary.toolCalls;
        details.usage = summary.usage;
        details.durationMs = summary.durationMs;
        details.text = summary.text;
        if (context.outcome.output !== undefined && summary.reason === "final_answer") details.output = context.outcome.output;
        break;
      }
      default:
        break;
    }
    const seen = this.seen;
    this.seen = context.batch;
    if (context.batch === seen) return details;
    const permissions = newPermissions(context.batch, seen);
    if (permissions) details.permissions = permissions;
    const results = newResults(context.batch, seen, this.blobs);
    if (results) details.results = results;
    return details;
  }
}

/** The same call as the last line saw it, if it did (a new response replaces the batch with calls of new ids). */
function before(seen: readonly CallRecord[], i: number, record: CallRecord): CallRecord | undefined {
  const old = seen[i];
  return old !== undefined && old.call.id === record.call.id ? old : undefined;
}

// Both run on every state whose batch changed and mostly find nothing new: the list is only made once there is
// something to put in it.
function newPermissions(batch: readonly CallRecord[], seen: readonly CallRecord[]) {
  let out: Record<string, unknown>[] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i];
    if (!r.permission || before(seen, i, r)?.permission) continue;
    // Object.assign, not `{ ...permission, name }` (see the tool calls above); the same keys in the same order.
    const entry: Record<string, unknown> = {};
    (out ??= []).push(Object.assign(entry, r.permission, { name: r.call.name }));
  }
  return out;
}

function newResults(batch: readonly CallRecord[], seen: readonly CallRecord[], blobs: BlobStore | undefined) {
  let out: Record<string, unknown>[] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i];
    if (!r.result || before(seen, i, r)?.result) continue;
    (out ??= []).push({
      toolCallId: r.call.id,
      name: r.call.name,
      content: r.result.content,
      isError: r.result.isError,
      // An image a tool returned: its parts, the bytes by hash.
      ...(r.result.parts ? { parts: blobs ? partsToBlobs(r.result.parts, blobs) : r.result.parts } : {}),
      ...(r.result.details !== undefined ? { details: r.result.details } : {}),
      ...(r.durationMs !== undefined ? { durationMs: Math.round(r.durationMs * 1000) / 1000 } : {}),
      ...(r.error ? { error: r.error.toJSON() } : {}),
    });
  }
  return out;
}
