import type { McpServer } from "@modelcontextprotocol/server";
import type { ServerSdk } from "./run-tool.js";
import { listSessions, sessionSummary, sessionTrace, SUMMARY_TEMPLATE, TRACE_TEMPLATE } from "./sessions.js";

/** Each session of the agent's trace file as two resources: its trace (JSONL) and its summary (JSON). */
export function registerSessionResources(sdk: ServerSdk, server: McpServer, traceFile: string | false): void {
  const list = (what: "trace" | "summary", mimeType: string) => async () => ({
    resources: (await listSessions(traceFile)).map((s) => ({
      uri: `statecraft://sessions/${s.sessionId}/${what}`,
      name: `${what} of session ${s.sessionId}`,
      description: `Started ${s.startedAt}${s.firstPrompt ? `: ${s.firstPrompt}` : ""}`,
      mimeType,
    })),
  });
  const idOf = (variables: Record<string, string | string[]>): string => {
    const id = variables.id;
    return Array.isArray(id) ? id.join("/") : id;
  };
  server.registerResource(
    "session-trace",
    new sdk.ResourceTemplate(TRACE_TEMPLATE, { list: list("trace", "application/jsonl") }),
    { title: "Session trace", description: "Every state the session's runs went through, one JSON line each (docs/trace.md).", mimeType: "application/jsonl" },
    async (uri, variables) => {
      const text = await sessionTrace(traceFile, idOf(variables));
      if (text === undefined) throw new sdk.ResourceNotFoundError(`no session ${idOf(variables)} in the agent's trace`);
      return { contents: [{ uri: uri.href, mimeType: "application/jsonl", text }] };
    },
  );
  server.registerResource(
    "session-summary",
    new sdk.ResourceTemplate(SUMMARY_TEMPLATE, { list: list("summary", "application/json") }),
    { title: "Session summary", description: "Each run of the session: its prompt, how it ended, turns, tool calls, tokens and final text.", mimeType: "application/json" },
    async (uri, variables) => {
      const summary = await sessionSummary(traceFile, idOf(variables));
      if (summary === undefined) throw new sdk.ResourceNotFoundError(`no session ${idOf(variables)} in the agent's trace`);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(summary, null, 2) }] };
    },
  );
}
