import { setMaxListeners } from "node:events";
import { AgentError, toAgentError } from "../errors/agent-error.js";
import type { AgentEvent } from "../events.js";
import { callHook, type AgentHooks } from "../hooks.js";
import type { ToolCall, ToolResult } from "../models/messages.js";
import { contentText, type ContentPart, type ContentPartInput } from "../models/content.js";
import { contentParts } from "../models/input.js";
import { recheckDecision, type DecidedCall } from "../permissions/recheck.js";
import type { PermissionPolicy } from "../permissions/types.js";
import type { AnyTool, RunInfo, ToolOutput, ToolProgress } from "../tools/define-tool.js";
import { withRunSandbox } from "../sandbox/index.js";
import { truncateMiddle } from "../tools/truncate.js";
import { abortable } from "../util/abortable.js";
import type { Report } from "./report.js";

export interface RunToolsInput {
  /**
   * Allowed calls of one response, in call order, with their validated input in `call.input` and what their
   * permission decision saw (`decided`).
   */
  calls: ReadonlyArray<{ call: ToolCall; tool: AnyTool; decided?: DecidedCall }>;
  /**
   * Decides each call with a `decided` again as it starts (earlier calls of the response may have changed the file
   * system since). Absent, calls run as decided: a replay plays recorded results and touches no file.
   */
  policy?: PermissionPolicy;
  cwd: string;
  afterToolCall?: AgentHooks["afterToolCall"];
  /** What subagent tools inherit from this run (their events are relayed up through this batch's reports). */
  run: Omit<RunInfo, "relay">;
}

/**
 * How many of a batch's calls start the moment the batch is asked for: its leading run of parallel calls, or its
 * first call. The engine announces those itself as it asks (one event less per step); later starts are reported.
 */
export function startingAtOnce(calls: RunToolsInput["calls"]): number {
  if (calls.length === 0) return 0;
  if (calls[0].tool.executionMode !== "parallel") return 1;
  let n = 1;
  while (n < calls.length && calls[n].tool.executionMode === "parallel") n++;
  return n;
}

/**
 * Runs the allowed calls of one response: consecutive parallel (read-only) calls together, sequential ones one at a
 * time in call order. The calls that start at once (`startingAtOnce`) start before this returns its promise; every
 * later start and every finish is sent to the engine as it happens. A call's own error never stops the others; the
 * work's signal (run aborted or timed out) aborts them all.
 */
export async function runTools(batch: RunToolsInput, signal: AbortSignal, report: Report): Promise<void> {
  // A subagent may still report while its parent is leaving execute_tool: the report is dropped then.
  const input = { ...batch, run: withRelay(batch.run, report) };
  // Every call of a parallel group listens on the batch's signal; a large group is not a listener leak.
  if (input.calls.length > 1) setMaxListeners(0, signal);
  const announced = startingAtOnce(input.calls);
  // Pairs, not `{ ...entry, index }`: in V8 a spread copy given a property it lacks outlives the scavenges.
  let group: Array<{ entry: RunToolsInput["calls"][number]; index: number }> = [];
  const flush = async () => {
    if (group.length === 0) return;
    const running = group;
    group = [];
    const blocked = await Promise.all(running.map(({ entry, index }) => runOne(entry, input, signal, report, index >= announced)));
    if (blocked.includes(true)) await loopTurn();
  };
  for (let index = 0; index < input.calls.length; index++) {
    const entry = input.calls[index];
    if (signal.aborted) return;
    if (entry.tool.executionMode === "parallel") {
      group.push({ entry, index });
      continue;
    }
    // Only a group waits: the first call starts before the first await.
    if (group.length > 0) await flush();
    if (signal.aborted) return;
    if (await runOne(entry, input, signal, report, index >= announced)) await loopTurn();
  }
  await flush();
}

/** A tool whose synchronous part ran this long held the event loop: timers and signals may be waiting. */
const BLOCKING_MS = 10;

/**
 * One full turn of the event loop (timers, then I/O and signals, then immediates). After a call that blocked the
 * thread, a Ctrl-C or an abort timer that came meanwhile is handled before the next call starts, instead of after
 * every remaining call of the batch; calls that yield on their own never pay for it.
 */
function loopTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(() => setImmediate(resolve), 0));
}

async function runOne(
  entry: RunToolsInput["calls"][number],
  input: RunToolsInput & { run: RunInfo },
  runSignal: AbortSignal,
  report: Report,
  reportStart: boolean,
): Promise<boolean> {
  const { call, tool } = entry;
  if (runSignal.aborted) return false;
  if (reportStart) report({ type: "tool.started", call });
  const started = performance.now();
  const changed = recheck(entry, input.policy);
  if (changed) {
    report({ type: "tool.finished", id: call.id, error: changed, durationMs: performance.now() - started });
    return false;
  }
  const timeout = tool.timeoutMs === undefined ? undefined : AbortSignal.timeout(tool.timeoutMs);
  const signal = timeout ? AbortSignal.any([runSignal, timeout]) : runSignal;
  // How long the tool's synchronous part held the thread (see loopTurn).
  let blockedMs = 0;
  let ended = false;
  const progress = (update: ToolProgress) => {
    // A late notification (after the result or the abort) is dropped: the call's events end with its result.
    if (ended || signal.aborted || typeof update?.progress !== "number") return;
    const { progress: done, total, message } = update;
    report({ type: "tool.progress", call, progress: done, ...(typeof total === "number" ? { total } : {}), ...(typeof message === "string" ? { message } : {}) });
  };
  const execute = () => {
    const from = performance.now();
    try {
      // A process the tool starts through the process helper runs in this run's sandbox (src/sandbox/run-scope.ts).
      return withRunSandbox(input.run.sandbox, () => tool.execute(call.input, { signal, cwd: input.cwd, sessionId: call.sessionId, toolCallId: call.id, run: input.run, progress }));
    } finally {
      blockedMs = performance.now() - from;
    }
  };
  const finish = (event: Parameters<Report>[0]) => {
    ended = true;
    report(event);
    return blockedMs >= BLOCKING_MS;
  };
  let result: ToolResult;
  try {
    const output = await abortable(Promise.resolve().then(execute), signal);
    if (runSignal.aborted) return false;
    result = normaliseOutput(output, tool);
  } catch (error) {
    if (runSignal.aborted) return false;
    const durationMs = performance.now() - started;
    if (timeout?.aborted) {
      const err = new AgentError("TOOL_TIMEOUT", `tool ${tool.name} timed out after ${tool.timeoutMs} ms and was stopped`);
      return finish({ type: "tool.finished", id: call.id, error: err, durationMs });
    }
    const err = toAgentError(error, "TOOL_FAILED");
    return finish({ type: "tool.finished", id: call.id, error: err, fatal: err.code === "TOOL_FATAL", durationMs });
  }
  if (input.afterToolCall) {
    const hook = input.afterToolCall;
    try {
      const replaced = await abortable(callHook("afterToolCall", () => hook(call, result)), runSignal);
      if (replaced) {
        if (typeof replaced.content !== "string") throw new AgentError("HOOK_FAILED", "hook afterToolCall failed: a replacement must be { content: string, isError?: boolean }");
        result = { content: replaced.content, isError: replaced.isError === true };
      }
    } catch (error) {
      if (runSignal.aborted) return false;
      const err = toAgentError(error, "HOOK_FAILED");
      return finish({ type: "tool.finished", id: call.id, error: err, durationMs: performance.now() - started });
    }
  }
  return finish({ type: "tool.finished", id: call.id, result, durationMs: performance.now() - started });
}

/** The call's decision taken again now, as it starts: an error saying why it may no longer run, or undefined. */
function recheck(entry: RunToolsInput["calls"][number], policy: PermissionPolicy | undefined): AgentError | undefined {
  if (!policy || !entry.decided) return undefined;
  let why: string | undefined;
  try {
    why = recheckDecision(policy, entry.tool, entry.call.input, entry.decided);
  } catch (error) {
    why = `the permission check failed: ${(error as Error).message}`;
  }
  if (why === undefined) return undefined;
  return new AgentError(
    "PERMISSION_DENIED",
    `permission re-checked as ${entry.tool.name} started: ${why}. It was allowed before the earlier calls of this response ran, ` +
      `and what it touches has changed since; ${entry.tool.name} was not run`,
  );
}

/**
 * The calling run as this batch's tools see it, relaying to the batch's reports. Built field by field: a spread copy
 * with a property added (`{ ...run, relay }`) outlived the scavenges in V8, about 0.2 KB promoted a step
 * (bench/notes.md, "Promoted bytes").
 */
function withRelay(run: RunToolsInput["run"], report: Report): RunInfo {
  const info: RunInfo = {
    sessionId: run.sessionId,
    depth: run.depth,
    maxDelegationDepth: run.maxDelegationDepth,
    deadline: run.deadline,
    remainingTurns: run.remainingTurns,
    remainingToolCalls: run.remainingToolCalls,
    traceFile: run.traceFile,
    permissions: run.permissions,
    model: run.model,
    relay: relayTo(report),
  };
  if (run.hostSubagent) info.hostSubagent = run.hostSubagent;
  if (run.observeSubagent) info.observeSubagent = run.observeSubagent;
  if (run.sandbox) info.sandbox = run.sandbox;
  return info;
}

function relayTo(report: Report): (event: AgentEvent) => void {
  return (event) => {
    if (event.type === "subagent_event") report({ type: "subagent.event", event });
  };
}

function normaliseOutput(output: ToolOutput, tool: AnyTool): ToolResult {
  if (typeof output === "string") return { content: truncateMiddle(output, tool.maxOutputChars), isError: false };
  if (output === null || typeof output !== "object" || (typeof output.content !== "string" && !Array.isArray(output.content))) {
    throw new AgentError(
      "TOOL_FAILED",
      `tool ${tool.name} returned ${JSON.stringify(output)}; execute must return a string or { content: string | parts, isError?: boolean }`,
    );
  }
  const parts = typeof output.content === "string" ? undefined : toolParts(output.content, tool);
  const text = parts ? contentText(parts) || "(the result is an image)" : (output.content as string);
  const result: ToolResult = { content: truncateMiddle(text, tool.maxOutputChars), isError: output.isError === true };
  if (parts) result.parts = parts;
  const details = detailsOf(output.details, tool.maxOutputChars);
  return details ? { ...result, details } : result;
}

/** A tool's parts with binary data as base64; a part that is not valid fails the call, naming the tool. */
function toolParts(parts: readonly ContentPartInput[], tool: AnyTool): ContentPart[] {
  try {
    return contentParts(parts, "content");
  } catch (error) {
    throw new AgentError("TOOL_FAILED", `tool ${tool.name} returned parts that are not valid: ${(error as Error).message.replace(/^query\(input, options\): /, "")}`);
  }
}

/**
 * A tool's details as kept: a JSON copy of a plain object, and none when larger than the tool's output limit (the
 * trace holds them, and must stay bounded like the text).
 */
function detailsOf(details: unknown, maxChars: number): Record<string, unknown> | undefined {
  if (details === null || typeof details !== "object" || Array.isArray(details)) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(details);
  } catch {
    return undefined;
  }
  if (text === undefined || text.length > maxChars) return undefined;
  return JSON.parse(text) as Record<string, unknown>;
}
