import { defineTool, type AnyTool, type ToolRisk } from "../tools/define-tool.js";
import type { McpConnection } from "./connection.js";
import { mcpToolName, mcpToolRisk, type ToolAnnotations } from "./names.js";
import { mapCallResult } from "./results.js";

/** The parts of an MCP tool listing this file reads. */
export interface McpToolListing {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: ToolAnnotations & { title?: string };
}

export interface McpToolSettings {
  risk?: Record<string, ToolRisk>;
  timeoutMs: number;
}

/**
 * A server's tool as a statecraft tool: input validated by the engine's ajv path against the server's schema, risk
 * from the annotations (or an override), `path` as the permission subject when the schema has one, and every failure
 * of the server (a crash, a refusal, a lost connection) an error result the model sees rather than a failed run.
 * Throws `INVALID_TOOL` when the schema does not compile; the caller leaves that tool out.
 */
export function toStatecraftTool(connection: McpConnection, listing: McpToolListing, settings: McpToolSettings): AnyTool {
  const name = mcpToolName(connection.server, listing.name);
  const schema = objectSchema(listing.inputSchema);
  const hasPath = typeof (schema.properties as Record<string, unknown> | undefined)?.path === "object";
  return defineTool<Record<string, unknown>>({
    name,
    description: describe(connection.server, listing),
    inputSchema: schema,
    risk: mcpToolRisk(name, listing.annotations, settings.risk),
    timeoutMs: settings.timeoutMs,
    ...(hasPath ? { permissionSubject: (input) => (typeof input.path === "string" ? input.path : undefined), permissionSubjectKind: "path" as const } : {}),
    async execute(input, context) {
      try {
        const result = await connection.call(listing.name, input, {
          signal: context.signal,
          timeoutMs: settings.timeoutMs,
          ...(context.progress ? { onProgress: context.progress } : {}),
        });
        return mapCallResult(result);
      } catch (error) {
        // Aborts and timeouts are the engine's to report (it knows which it was); the signal says so.
        if (context.signal.aborted) throw error;
        const lost = connection.lost;
        const message = (error as Error).message;
        return {
          content: lost
            ? `Error: MCP server "${connection.server}" went away during ${listing.name}: ${message}. ` +
              (connection.canRestart ? "It is started again for the next call." : "It has been restarted as often as allowed; its tools are unavailable now.")
            : `Error: MCP server "${connection.server}" failed ${listing.name}: ${message}`,
          isError: true,
        };
      }
    },
  });
}

function describe(server: string, listing: McpToolListing): string {
  const text = listing.description?.trim() || listing.title || listing.annotations?.title || listing.name;
  return `${text}\n\n(Tool "${listing.name}" of MCP server "${server}".)`;
}

/** MCP requires an object schema; a server that sends none (or an odd one) still gets an object-taking tool. */
function objectSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return { type: "object", properties: {} };
  let out = schema.type === undefined ? { ...schema, type: "object" } : schema;
  // MCP's default dialect is JSON Schema 2020-12, which the engine's draft-07 validator does not load by name: the
  // schema is checked as draft-07 instead. The keywords that differ (prefixItems, $dynamicRef…) are then ignored,
  // which makes the check looser, never stricter; the server still validates its own input.
  if (typeof out.$schema === "string" && /json-schema\.org\/draft\/20(19-09|20-12)\/schema/.test(out.$schema)) {
    const { $schema: _dialect, ...rest } = out;
    out = rest;
  }
  return out;
}
