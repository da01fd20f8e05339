import { AgentError } from "../errors/agent-error.js";
import type { ScriptedStep, ScriptedToolCall } from "../models/scripted.js";
import { analyseRun, type RecordedModelCall, type RecordedRun } from "./recording.js";
import { splitRuns, type TraceSession } from "./session.js";

/** A scripted-model file made from a recorded session: `scriptedModel.fromFile()` and `--model script:<file>` read it. */
export interface SessionScript {
  /** The session it was made from. */
  session: string;
  /** The request of the (first) scripted run: run it with the same request to reproduce the recording. */
  request: string;
  /** Every run's request, when several runs of the session were scripted (a chat session). */
  requests?: string[];
  /** The recorded options worth repeating (limits, permission mode and rules, tools). */
  options?: Record<string, unknown>;
  /** What the script can't reproduce (retries, a stop from outside), in words. */
  notes?: string[];
  /** One step per recorded model call, in order. */
  steps: ScriptedStep[];
}

/**
 * The session's model outputs as a scripted-model file: one step per recorded model call (text, thinking, tool calls
 * with the recorded arguments, finish reason, usage; a failed request as an error step). Running the same request
 * with this model, the same tools and options reproduces the run, which makes a recorded bug a regression case.
 * `run` picks one run (1-based) of a session that has several; by default all are scripted, in order.
 */
export function scriptOf(session: TraceSession, options: { run?: number } = {}): SessionScript {
  const runs = splitRuns(session.lines).map((lines, i) => analyseRun(lines, i));
  if (runs.length === 0) throw new AgentError("INVALID_OPTIONS", `session ${session.sessionId} has no lines`);
  let chosen = runs;
  if (options.run !== undefined) {
    if (!Number.isInteger(options.run) || options.run < 1 || options.run > runs.length) {
      throw new AgentError("INVALID_OPTIONS", `run must be a whole number from 1 to ${runs.length} (the session's runs), got ${JSON.stringify(options.run)}`);
    }
    chosen = [runs[options.run - 1]];
  }
  const notes: string[] = [];
  const steps: ScriptedStep[] = [];
  for (const run of chosen) for (const call of run.modelCalls) {
    const step = stepOf(call, run, notes);
    if (step) steps.push(step);
  }
  const first = chosen[0];
  const o = first.options;
  return {
    session: session.sessionId,
    request: first.input,
    ...(chosen.length > 1 ? { requests: chosen.map((r) => r.input) } : {}),
    ...(o
      ? {
          options: {
            maxTurns: o.maxTurns,
            maxToolCalls: o.maxToolCalls,
            timeoutMs: o.timeoutMs,
            ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}),
            permissions: { mode: o.permissions.mode, allow: o.permissions.allow, ask: o.permissions.ask, deny: o.permissions.deny },
            tools: o.tools.map((t) => t.name),
          },
        }
      : {}),
    ...(notes.length > 0 ? { notes } : {}),
    steps,
  };
}

function stepOf(call: RecordedModelCall, run: RecordedRun, notes: string[]): ScriptedStep | undefined {
  const where = `model call ${call.index + 1} (seq ${call.seq}${run.index > 0 ? `, run ${run.index + 1}` : ""})`;
  if (call.stream.some((e) => e.type === "retry")) notes.push(`${where} was retried by the provider; the script answers at once`);
  const outcome = call.outcome;
  switch (outcome.kind) {
    case "response": {
      const r = outcome.response;
      const toolCalls: ScriptedToolCall[] = r.toolCalls.map((c) => {
        const id = c.providerId !== undefined ? { id: c.providerId } : {};
        if (typeof c.arguments !== "string") return { name: c.name, input: c.arguments, ...id };
        try {
          const input = JSON.parse(c.arguments) as unknown;
          if (JSON.stringify(input) === c.arguments) return { name: c.name, input, ...id };
        } catch {
          // not JSON: kept as the raw text the model sent
        }
        return { name: c.name, rawArguments: c.arguments, ...id };
      });
      const defaultFinish = toolCalls.length ? "tool_calls" : "stop";
      return {
        ...(r.text !== "" ? { text: r.text } : {}),
        ...(r.thinking ? { thinking: r.thinking } : {}),
        ...(toolCalls.length ? { toolCalls } : {}),
        ...(r.finishReason !== defaultFinish ? { finishReason: r.finishReason } : {}),
        ...(r.usage ? { usage: r.usage } : {}),
      };
    }
    case "error": {
      // The scripted model words its error "model request failed (<status> <code>): <message>"; the recorded message
      // already is that, so it is taken apart again.
      const parsed = /^model request failed \((\d+)(?: ([^)]+))?\): ([\s\S]*)$/.exec(outcome.error.message);
      const status = parsed ? Number(parsed[1]) : (outcome.error.status ?? 500);
      const code = parsed?.[2] ?? (outcome.error.code === "CONTEXT_OVERFLOW" ? "context_length_exceeded" : undefined);
      const partial = call.stream.some((e) => e.type === "text") && call.index === run.modelCalls.length - 1 ? doneText(run) : undefined;
      return { ...(partial ? { text: partial } : {}), error: { status, ...(code ? { code } : {}), message: parsed ? parsed[3] : outcome.error.message } };
    }
    case "cut": {
      const limit = run.options?.timeoutMs ?? 120_000;
      notes.push(`${where} was cut off by the run's stop (${stopReason(run)}); its step waits ${limit} ms, so a run with the same timeout stops there too`);
      return { ...(outcome.text ? { text: outcome.text } : {}), delayMs: limit };
    }
    default:
      notes.push(`${where} has no recorded outcome (the trace ends there); it is left out`);
      return undefined;
  }
}

function doneText(run: RecordedRun): string | undefined {
  const text = (run.done as { details?: { text?: unknown } } | undefined)?.details?.text;
  return typeof text === "string" && text !== "" ? text : undefined;
}

function stopReason(run: RecordedRun): string {
  const reason = (run.done as { details?: { reason?: unknown } } | undefined)?.details?.reason;
  return typeof reason === "string" ? reason : "unknown";
}
