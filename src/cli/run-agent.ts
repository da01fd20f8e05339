import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import type { AgentEvent } from "../events.js";
import type { StopReason } from "../machine/stop-reasons.js";
import type { ToolCall, ToolResult } from "../models/messages.js";
import type { Model } from "../models/model.js";
import { createPermissionPolicy } from "../permissions/policy.js";
import type { PermissionAnswer, PermissionOptions, PermissionRequest } from "../permissions/types.js";
import { query, type QueryRun } from "../query.js";
import type { QueryOptions } from "../options.js";
import type { AnyTool } from "../tools/define-tool.js";
import type { Style } from "./colors.js";
import type { RunSettings } from "./config.js";
import { denialNotice } from "./denial-notice.js";
import { EXIT_CODES, exitCodeFor } from "./exit-codes.js";
import { listenForInterrupts } from "./interrupts.js";
import { canAsk, type CliIO, type InputStream } from "./io.js";
import type { Logger } from "./logger.js";
import { createTerminalPrompter } from "./prompt.js";
import type { QueryInput } from "../models/input.js";
import type { Renderer } from "./render.js";
import { UsageError } from "./usage-error.js";
import { agentFolder } from "../record/agent-folder.js";

export type TurnEnd = Extract<AgentEvent, { type: "turn_end" }>;
export type Suspended = Extract<AgentEvent, { type: "suspended" }>;

/** What a run needs beyond its prompt: the resolved settings minus the model choice, which is already a `Model`. */
export type RunParameters = Omit<RunSettings, "model" | "configFile" | "warnings">;

export interface ExecuteRunOptions {
  /** The prompt, or a user message with parts (`--image`). */
  prompt: QueryInput;
  params: RunParameters;
  model: Model;
  tools: readonly AnyTool[];
  io: CliIO;
  renderer: Renderer;
  /** `--json`: notices go to stderr, never stdout. */
  json: boolean;
  /** Style of stderr (for notices there). */
  errStyle: Style;
  /** Style of wherever the permission question is written (stdout for people, stderr in JSON mode). */
  promptStyle: Style;
  logger: Logger;
  /** Where permission questions read keys, when not stdin (the controlling terminal while stdin is a pipe). */
  askInput?: InputStream;
  /**
   * Answers permission requests instead of the person at the terminal (the demo's own policy). Without it a terminal
   * asks y/a/n, and without a terminal a call that must be asked is denied.
   */
  answer?: (request: PermissionRequest) => Promise<PermissionAnswer> | PermissionAnswer;
  /** `--inspect [--port N]`: serve the inspector for this run. */
  inspect?: { port?: number };
  /** `--on-ask suspend`: a question nobody can answer here suspends the run (and the run is durable). */
  onAsk?: "deny" | "suspend";
  /** `--output-schema FILE`: the JSON Schema of the final answer. */
  output?: Record<string, unknown>;
  /** Starts the run instead of `query(prompt, options)` (`statecraft resume`). */
  start?: (options: QueryOptions) => QueryRun;
  /** The run's observers (`--otel`'s spans). */
  observers?: QueryOptions["observers"];
}

export interface RunOutcome {
  /** How the run stopped; undefined when it suspended. */
  reason: StopReason | undefined;
  exitCode: number;
  sessionId: string;
  /** Where the trace was written, or false. */
  traceFile: string | false;
  end?: TurnEnd;
  suspended?: Suspended;
}

/** The trace file a run writes, as the engine resolves it. */
export function traceFileOf(params: Pick<RunParameters, "traceFile" | "cwd">): string | false {
  if (params.traceFile === false) return false;
  return params.traceFile ?? join(agentFolder(params.cwd), "trace.jsonl");
}

/**
 * Runs the agent once through `query()` and renders its events. Ctrl-C (or SIGTERM) aborts the run (it ends
 * `user_abort`, recorded in the trace); a second Ctrl-C leaves at once. Returns how the run stopped and its exit code.
 */
export async function executeRun(options: ExecuteRunOptions): Promise<RunOutcome> {
  const { io, renderer, params, logger } = options;
  const controller = new AbortController();
  const askInput = options.askInput ?? (canAsk(io) ? io.stdin : undefined);
  const interactive = options.answer === undefined && askInput !== undefined;
  const notice = (text: string) => {
    if (options.json) io.stderr.write(`${text}\n`);
    else renderer.line(text);
  };

  const interrupt = (why = "interrupted") => {
    if (controller.signal.aborted) return;
    logger.info({ why }, "aborting the run");
    notice(options.errStyle.yellow(`${why}: stopping the run (Ctrl-C again to quit at once)`));
    controller.abort();
  };
  const prompter =
    interactive && askInput
      ? createTerminalPrompter({
          input: askInput,
          output: options.json ? io.stderr : io.stdout,
          style: options.promptStyle,
          beforeAsk: () => renderer.pause(),
          onInterrupt: () => interrupt(),
        })
      : undefined;

  const permissions: PermissionOptions = {
    ...(params.permissions.mode !== undefined ? { mode: params.permissions.mode } : {}),
    allow: params.permissions.allow,
    ask: params.permissions.ask,
    deny: params.permissions.deny,
    ...(options.onAsk === "suspend" ? { whenUnanswered: "suspend" as const } : {}),
    ...(params.permissions.onDeny !== undefined ? { onDeny: params.permissions.onDeny } : {}),
  };
  if (options.answer) {
    const answer = options.answer;
    permissions.onAsk = async (request) => {
      await renderedSoFar();
      renderer.pause();
      return answer(request);
    };
  } else if (prompter) {
    permissions.onAsk = async (request) => {
      await renderedSoFar();
      return prompter.ask(request);
    };
  }

  let run: QueryRun;
  try {
    const queryOptions: QueryOptions = {
      model: options.model,
      tools: options.tools,
      cwd: params.cwd,
      signal: controller.signal,
      permissions,
      logger,
      ...(params.maxTurns !== undefined ? { maxTurns: params.maxTurns } : {}),
      ...(params.maxToolCalls !== undefined ? { maxToolCalls: params.maxToolCalls } : {}),
      ...(params.timeoutMs !== undefined ? { timeoutMs: params.timeoutMs } : {}),
      ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
      ...(params.sessionId !== undefined ? { sessionId: params.sessionId } : {}),
      ...(params.traceFile !== undefined ? { traceFile: params.traceFile } : {}),
      ...(params.sandbox !== undefined ? { sandbox: params.sandbox } : {}),
      ...(options.inspect ? { inspect: options.inspect } : {}),
      ...(options.observers ? { observers: options.observers } : {}),
      ...(options.output ? { output: options.output } : {}),
    };
    run = options.start ? options.start(queryOptions) : query(options.prompt, queryOptions);
  } catch (error) {
    if (error instanceof AgentError && error.code === "INVALID_OPTIONS") throw new UsageError(error.message.replace(/^options\./, ""));
    throw error;
  }
  logger.info({ sessionId: run.sessionId, cwd: params.cwd, model: options.model.name }, "run started");

  const stopListening = listenForInterrupts((count, signal) => {
    if (count === 1) {
      interrupt(signal === "SIGPIPE" ? "output closed" : signal === "SIGTERM" ? "terminated" : "interrupted");
      return;
    }
    prompter?.cancel();
    renderer.close();
    io.stderr.write("statecraft: quit\n");
    process.exit(EXIT_CODES.user_abort);
  });

  // The calls of the latest model response, to name a call denied because no one could be asked.
  let lastBatch: Array<{ call: ToolCall; result?: ToolResult; started: boolean }> = [];
  let end: TurnEnd | undefined;
  let suspended: Suspended | undefined;
  try {
    for await (const event of run) {
      if (event.type === "inspector") io.stderr.write(`inspector: ${event.url}\n`);
      const unasked = event.type === "turn_end" && event.reason === "permission_denied" && !interactive && options.answer === undefined;
      renderer.event(unasked ? flagsFirst(event, unaskedDenial(lastBatch, options.tools, permissions, params.cwd), io, options.json === true) : event);
      if (event.type === "state" && event.state === "call_model") lastBatch = [];
      else if (event.type === "tool_start") lastBatch.push({ call: event.call, started: true });
      else if (event.type === "tool_result") {
        const entry = lastBatch.find((e) => e.call.id === event.call.id);
        if (entry) entry.result = event.result;
        else lastBatch.push({ call: event.call, result: event.result, started: false });
      } else if (event.type === "turn_end") end = event;
      else if (event.type === "suspended") suspended = event;
      if (event.type !== "text_delta" && event.type !== "thinking_delta") logger.debug({ event: event.type, ...summary(event) }, "event");
    }
  } finally {
    stopListening();
    prompter?.cancel();
    renderer.close();
  }
  if (suspended) {
    logger.info({ sessionId: suspended.sessionId, pending: suspended.pending.length }, "run suspended");
    for (const line of suspendedNotice(suspended)) notice(line);
    return { reason: undefined, exitCode: EXIT_CODES.suspended, sessionId: suspended.sessionId, traceFile: traceFileOf(params), suspended };
  }
  if (!end) throw new Error("the run ended without a turn_end event");
  logger.info({ reason: end.reason, sessionId: end.sessionId, turns: end.turns, toolCalls: end.toolCalls }, "run finished");

  return { reason: end.reason, exitCode: exitCodeFor(end.reason), sessionId: end.sessionId, traceFile: traceFileOf(params), end };
}

/** What a suspended run waits for, and the command that goes on. */
export function suspendedNotice(event: Suspended): string[] {
  const lines = [`suspended: ${event.pending.length === 1 ? "1 call waits" : `${event.pending.length} calls wait`} for an answer (session ${event.sessionId})`];
  for (const call of event.pending) lines.push(`  ${call.callId}  ${call.name} ${JSON.stringify(call.input)}  — ${call.reason}`);
  const first = event.pending[0]?.callId ?? "ID";
  lines.push(`resume with: statecraft resume ${event.sessionId} --allow ${first}   (or --deny ID, --allow-all, --deny-all; unanswered calls are asked)`);
  return lines;
}

/**
 * A run that stopped on a call nobody could be asked about: the flags that would allow it go to stderr before the
 * run's summary, and the summary's error points at them instead of at `permissions.onAsk` (the library's way, which a
 * person at the command line has no use for). `--json` gets the event as the engine gave it.
 */
function flagsFirst(event: TurnEnd, denied: ReturnType<typeof unaskedDenial>, io: CliIO, json: boolean): TurnEnd {
  if (!denied) return event;
  io.stderr.write(`${denialNotice(denied.call, denied.risk)}\n`);
  if (json || !event.error) return event;
  const message = `permission denied for ${denied.call.name}: it needs permission and there is no terminal to ask; run again with one of the flags above`;
  return { ...event, error: { ...event.error, message } };
}

/**
 * The call of the last response that was denied only because it needed asking and nobody could be asked (the policy
 * says "ask"), as opposed to a deny rule or the plan mode, which no flag of this run would have changed.
 */
function unaskedDenial(
  batch: ReadonlyArray<{ call: ToolCall; result?: ToolResult; started: boolean }>,
  tools: readonly AnyTool[],
  permissions: PermissionOptions,
  cwd: string,
): { call: ToolCall; risk: AnyTool["risk"] } | undefined {
  const policy = createPermissionPolicy(permissions, [], { cwd });
  for (const entry of batch) {
    if (entry.started || !entry.result?.isError || !entry.result.content.startsWith("Permission denied")) continue;
    const tool = tools.find((t) => t.name === entry.call.name);
    if (!tool) continue;
    if (policy.evaluate(tool, entry.call.input).kind === "ask") return { call: entry.call, risk: tool.risk };
  }
  return undefined;
}

/** A few identifying fields of an event for debug logs (never tool output or file contents). */
function summary(event: AgentEvent): Record<string, unknown> {
  switch (event.type) {
    case "state":
      return { state: event.state, turn: event.turn };
    case "tool_start":
    case "permission_request":
      return { tool: event.call.name, toolCallId: event.call.id };
    case "tool_result":
      return { tool: event.call.name, toolCallId: event.call.id, isError: event.result.isError };
    case "retry":
      return { attempt: event.attempt, delayMs: event.delayMs, code: event.error.code };
    case "turn_end":
      return { reason: event.reason };
    default:
      return {};
  }
}

/**
 * Resolves once the events the run has already produced are rendered. The engine asks its question as soon as it
 * reaches ask_permission, while the loop rendering its events may still hold the ones before it (a model that answers
 * at once gets there within one tick): a question written first would be followed by their output — a "thinking"
 * spinner under the prompt. Those events reach the loop through promise jobs alone, which all run before the next
 * turn of the event loop, so waiting for that turn is waiting for them.
 */
function renderedSoFar(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
