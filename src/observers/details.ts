import type { CallRecord } from "../machine/context.js";
import type { StateEntered } from "./observe.js";
import { runSummary, type CompletedRunSummary } from "./run-summary.js";

/**
 * Builds each state's trace details: what led into the state, enough for the trace alone to explain and replay the
 * run (docs/trace.md). A line holds what that step produced, never the whole context; each tool result appears on
 * exactly one line (the first one after it was known).
 */
export class TraceDetails {
  // The calls of the current batch whose permission or result a line already carries. A new response replaces the
  // batch and call ids are the engine's own, never reused: the sets start over with each batch, so they stay as small
  // as one response instead of growing by every call of the run.
  private readonly tracedResults = new Set<string>();
  private readonly tracedPermissions = new Set<string>();
  private batch: readonly CallRecord[] | undefined;

  constructor(private readonly runOptions: Record<string, unknown>) {}

  of(entered: StateEntered): Record<string, unknown> {
    const { state, context, event } = entered;
    const details: Record<string, unknown> = {};
    // The run's request and options, once: on its first line. A later build_context (before each further model call)
    // carries what led into it, like any state: the model's answer when a queued message keeps the run going.
    if (state === "build_context" && entered.from === undefined) {
      details.input = context.run.userInput;
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
          details.claimed = { source: context.inbox.claimedFrom, messages: context.inbox.claimed.map((m) => m.content) };
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
        break;
      }
      default:
        break;
    }
    if (context.batch !== this.batch) {
      this.batch = context.batch;
      this.tracedResults.clear();
      this.tracedPermissions.clear();
    }
    const permissions = this.newPermissions(context.batch);
    if (permissions) details.permissions = permissions;
    const results = this.newResults(context.batch);
    if (results) details.results = results;
    return details;
  }

  // Both run on every state and mostly find nothing new: the list is only made once there is something to put in it.
  private newPermissions(batch: readonly CallRecord[]) {
    let out: Record<string, unknown>[] | undefined;
    for (const r of batch) {
      if (!r.permission || this.tracedPermissions.has(r.call.id)) continue;
      this.tracedPermissions.add(r.call.id);
      // Object.assign, not `{ ...permission, name }` (see the tool calls above); the same keys in the same order.
      const entry: Record<string, unknown> = {};
      (out ??= []).push(Object.assign(entry, r.permission, { name: r.call.name }));
    }
    return out;
  }

  private newResults(batch: readonly CallRecord[]) {
    let out: Record<string, unknown>[] | undefined;
    for (const r of batch) {
      if (!r.result || this.tracedResults.has(r.call.id)) continue;
      this.tracedResults.add(r.call.id);
      (out ??= []).push({
        toolCallId: r.call.id,
        name: r.call.name,
        content: r.result.content,
        isError: r.result.isError,
        ...(r.result.details !== undefined ? { details: r.result.details } : {}),
        ...(r.durationMs !== undefined ? { durationMs: Math.round(r.durationMs * 1000) / 1000 } : {}),
        ...(r.error ? { error: r.error.toJSON() } : {}),
      });
    }
    return out;
  }
}
