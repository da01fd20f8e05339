import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import type { CompletedRunResult } from "../events.js";
import type { PermissionRequest } from "../permissions/types.js";
import type { AgentRun, RunStop } from "./agent-run.js";

/** The SDK's pieces the tool uses, loaded with it. */
export type ServerSdk = typeof import("@modelcontextprotocol/server");

/** The tool's input, as JSON Schema (the host's model reads it). */
export const RUN_AGENT_INPUT = {
  type: "object",
  properties: {
    prompt: { type: "string", minLength: 1, description: "What the agent should do." },
    sessionId: { type: "string", minLength: 1, description: "Go on with this earlier session's conversation (the sessionId of an earlier answer)." },
  },
  required: ["prompt"],
  additionalProperties: false,
} as const;

/** The tool's `structuredContent`. */
export const RUN_AGENT_OUTPUT = {
  type: "object",
  properties: {
    sessionId: { type: "string" },
    reason: { type: "string" },
    turns: { type: "integer" },
    toolCalls: { type: "integer" },
    usage: {
      type: "object",
      properties: { input: { type: "integer" }, output: { type: "integer" }, cached: { type: "integer" }, reasoning: { type: "integer" } },
      required: ["input", "output", "cached", "reasoning"],
    },
  },
  required: ["sessionId", "reason", "turns", "toolCalls", "usage"],
} as const;

/** The elicitation a permission question becomes: allow this call once, or deny it. */
const decisionSchema = () => ({
  type: "object" as const,
  properties: {
    decision: {
      type: "string" as const,
      title: "Decision",
      oneOf: [
        { const: "allow", title: "Allow once" },
        { const: "deny", title: "Deny" },
      ],
    },
  },
  required: ["decision"],
});

/** The runs a server keeps between the rounds of a call, and how a call reaches them. */
export interface RunHost {
  start(input: { prompt: string; sessionId?: string }, askHost: boolean): AgentRun;
  find(key: string): AgentRun | undefined;
  /** Called when a question went to the host: the run is given up if no answer comes in time. */
  waiting(run: AgentRun): void;
  answered(run: AgentRun): void;
}

/**
 * Registers `run_agent` on one server instance. Written once for both protocol generations: on 2026-07-28 a question
 * is an `input_required` result and the host's answer comes back as a new round of the call; on a 2025 connection the
 * SDK sends the same question as `elicitation/create` and calls the handler again with the answer.
 */
export function registerRunTool(
  sdk: ServerSdk,
  server: McpServer,
  host: RunHost,
  tool: { name: string; description: string },
  mintState: (payload: { run: string }) => Promise<string>,
): void {
  server.registerTool(
    tool.name,
    {
      description: tool.description,
      inputSchema: sdk.fromJsonSchema<{ prompt: string; sessionId?: string }>(RUN_AGENT_INPUT),
      outputSchema: sdk.fromJsonSchema(RUN_AGENT_OUTPUT),
      annotations: { title: "Run the statecraft agent", readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    async (input, ctx) => {
      const state = ctx.mcpReq.requestState<{ run?: unknown }>();
      let run: AgentRun;
      if (state && typeof state === "object" && typeof state.run === "string") {
        const found = host.find(state.run);
        if (!found) return { content: [{ type: "text", text: "Error: that run is over (its question was left unanswered too long, or the server restarted)." }], isError: true };
        run = found;
        const view = sdk.inputResponse(ctx.mcpReq.inputResponses, "permission");
        host.answered(run);
        run.answer(view.kind === "elicit" && view.action === "accept" && view.content?.decision === "allow" ? "allow" : "deny");
      } else {
        run = host.start(input, supportsElicitation(server, ctx));
      }
      const stop = await waitForStop(run, ctx);
      if (stop.kind === "ask") {
        host.waiting(run);
        return sdk.inputRequired({
          inputRequests: { permission: sdk.inputRequired.elicit({ message: question(stop.request), requestedSchema: decisionSchema() }) },
          requestState: await mintState({ run: run.key }),
        });
      }
      return toolResult(stop.result);
    },
  );
}

/** Waits for the run's next stop, reporting each state as progress and aborting the run if the call is cancelled. */
async function waitForStop(run: AgentRun, ctx: ServerContext): Promise<RunStop> {
  const token = ctx.mcpReq._meta?.progressToken;
  let progress = 0;
  // Notifications are sent one after another, and all of them before the result: a host drops the progress of a
  // request it has already had the answer to, so a last notification overtaken by the result would be lost.
  let sent: Promise<unknown> = Promise.resolve();
  const onAbort = () => run.abort();
  if (ctx.mcpReq.signal.aborted) run.abort();
  ctx.mcpReq.signal.addEventListener("abort", onAbort);
  try {
    const stop = await run.nextStop({
      onState(state, turn) {
        if (token === undefined || ctx.mcpReq.signal.aborted) return;
        const params = { progressToken: token, progress: ++progress, message: `${state} (turn ${turn})` };
        sent = sent.then(() => ctx.mcpReq.notify({ method: "notifications/progress", params })).catch(() => undefined);
      },
    });
    await sent;
    return stop;
  } finally {
    ctx.mcpReq.signal.removeEventListener("abort", onAbort);
  }
}

/** Whether this call's host can answer an elicitation (form mode): from the request's envelope, or the 2025 handshake. */
function supportsElicitation(server: McpServer, ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const fromEnvelope = envelope?.["io.modelcontextprotocol/clientCapabilities"] as { elicitation?: { form?: unknown } } | undefined;
  const capabilities = fromEnvelope ?? server.server.getClientCapabilities();
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  // An empty elicitation capability means form mode (the 2025-06-18 shape); a host of URL mode only cannot answer.
  return elicitation !== undefined && (Object.keys(elicitation).length === 0 || elicitation.form !== undefined);
}

function question(request: PermissionRequest): string {
  const input = JSON.stringify(request.call.input);
  const shown = input.length > 2_000 ? `${input.slice(0, 2_000)}…` : input;
  return `The agent wants to call ${request.call.name} ${shown}.\n${request.reason}\nAllow this call once, or deny it?`;
}

function toolResult(result: CompletedRunResult) {
  const structured = { sessionId: result.sessionId, reason: result.reason, turns: result.turns, toolCalls: result.toolCalls, usage: result.usage };
  const failed = result.reason !== "final_answer";
  const why = result.error ? `: ${result.error.message}` : "";
  const text = failed ? `${result.text ? `${result.text}\n\n` : ""}The run ended ${result.reason}${why} (session ${result.sessionId}).` : result.text;
  return { content: [{ type: "text" as const, text }], structuredContent: structured, ...(failed ? { isError: true } : {}) };
}
