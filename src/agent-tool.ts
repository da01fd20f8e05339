import type { AgentEvent, RunResult } from "./events.js";
import type { QueryOptions } from "./options.js";
import type { EngineObserver } from "./observers/observe.js";
import { prepare, startRun } from "./query.js";
import { defineTool, type ToolDefinition, type ToolRisk } from "./tools/define-tool.js";

/** A subagent: a tool whose call runs a whole agent and returns its final text. */
export interface AgentToolOptions extends Omit<QueryOptions, "model" | "cwd" | "traceFile" | "permissions" | "signal" | "sessionId"> {
  name: string;
  description: string;
  /** Default `read`: the child's own tools go through the child's own permissions. */
  risk?: ToolRisk;
  /** Default: the calling run's model. */
  model?: QueryOptions["model"];
}

/**
 * Turns an agent definition into a tool with input `{ prompt }` and the child's final text as result. The child runs
 * inside the calling run's `execute_tool` (so stopping the parent stops it); it inherits the parent's cwd, trace file,
 * permissions and `onAsk`, abort signal and remaining time, and its maxTurns and maxToolCalls are at most what the
 * parent has left. Depth counts from the top run (0); a call past the top run's `maxDelegationDepth` gets an error result.
 * The child's events reach the parent's caller as `subagent_event`s; its trace lines carry `parentSession`.
 */
export function agentTool(options: AgentToolOptions): ToolDefinition<{ prompt: string }> {
  const { name, description, risk, model, ...childOptions } = options;
  return defineTool<{ prompt: string }>({
    name,
    description,
    risk: risk ?? "read",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The task for the subagent, with everything it needs to know." } },
      required: ["prompt"],
      additionalProperties: false,
    },
    async execute(input, ctx) {
      const parent = ctx.run;
      if (!parent) return { content: `Error: ${name} is a subagent tool and must be called by a statecraft run`, isError: true };
      const depth = parent.depth + 1;
      if (depth > parent.maxDelegationDepth) {
        return {
          content: `Error: not run: delegating to ${name} would go ${depth} levels deep, past maxDelegationDepth = ${parent.maxDelegationDepth}. Do the task yourself.`,
          isError: true,
        };
      }
      const remainingMs = parent.deadline - Date.now();
      if (parent.remainingTurns < 1 || remainingMs <= 0) {
        return { content: `Error: not run: the calling run has no model calls or time left for ${name}`, isError: true };
      }
      const prepared = prepare(
        input.prompt,
        {
          ...childOptions,
          model: model ?? parent.model,
          cwd: ctx.cwd,
          traceFile: parent.traceFile,
          permissions: parent.permissions,
          ...(parent.sandbox ? { sandbox: parent.sandbox.settings } : {}),
          signal: ctx.signal,
          timeoutMs: Math.max(1, Math.min(childOptions.timeoutMs ?? Number.POSITIVE_INFINITY, remainingMs)),
          maxTurns: Math.min(childOptions.maxTurns ?? 8, parent.remainingTurns),
          maxToolCalls: Math.min(childOptions.maxToolCalls ?? 12, parent.remainingToolCalls),
        },
        { parentSession: parent.sessionId, depth, maxDelegationDepth: parent.maxDelegationDepth },
      );
      // On a worker the child's lines go to the database with the parent's, not to files on the worker.
      parent.hostSubagent?.(prepared);
      // The calling run's observers may watch the child too (statecraft/otel nests its spans under this call's).
      const watching = (parent.observeSubagent?.({ sessionId: prepared.input.sessionId, parentSession: parent.sessionId, toolCallId: ctx.toolCallId, depth }) ?? []) as EngineObserver[];
      const observers = watching.length > 0 ? { observers: [...(childOptions.observers ?? []), ...watching] } : {};
      const run = startRun(prepared, { ...childOptions, ...observers, model: model ?? parent.model, signal: ctx.signal });
      let result: RunResult;
      for (;;) {
        const next = await run.next();
        if (next.done) {
          result = next.value;
          break;
        }
        const event: AgentEvent = next.value;
        // A grandchild's events are passed up as they are, with their own depth.
        if (event.type === "subagent_event") parent.relay(event);
        else parent.relay({ type: "subagent_event", sessionId: run.sessionId, parentSession: parent.sessionId, depth, event });
      }
      if (result.status === "suspended") {
        return { content: `Error: subagent ${name} stopped at a permission question (${result.pending.map((c) => c.name).join(", ")}); a subagent is not suspended, its question needs an answer at once`, isError: true };
      }
      if (result.reason !== "final_answer") {
        const why = result.error ? `${result.reason}: ${result.error.message}` : result.reason;
        return { content: `Error: subagent ${name} stopped (${why})${result.text ? `. Its last text:\n${result.text}` : ""}`, isError: true };
      }
      return result.text;
    },
  });
}
