import type { ToolOutput } from "../tools/define-tool.js";

/** The parts of an MCP `CallToolResult` this mapping reads (kept loose: servers send what they send). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  /** The 2024-10-07 form some old servers still answer with. */
  toolResult?: unknown;
}

/**
 * An MCP result as the model sees it: text parts joined by blank lines; an image, audio or resource as a short note
 * (the model's messages carry text only); `structuredContent` kept in the result's details, and shown as JSON when
 * there is no text to show it by; `isError` as an error result.
 */
export function mapCallResult(result: McpCallResult): ToolOutput {
  const parts: string[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const item of content) parts.push(describePart(item));
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && result.toolResult !== undefined) parts.push(typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult));
  const text = parts.join("\n\n");
  const structured = result.structuredContent;
  const details = structured !== null && typeof structured === "object" && !Array.isArray(structured) ? { structuredContent: structured as Record<string, unknown> } : undefined;
  if (result.isError === true) return { content: text === "" ? "Error: the MCP tool failed and said nothing more" : text, isError: true, ...(details ? { details } : {}) };
  const shown = text === "" ? "(no output)" : text;
  return details ? { content: shown, details } : shown;
}

function describePart(item: unknown): string {
  if (item === null || typeof item !== "object") return String(item);
  const part = item as Record<string, unknown>;
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? part.text : "";
    case "image":
    case "audio":
      return `[${part.type} ${String(part.mimeType ?? "of unknown type")}, ${base64Bytes(part.data)} bytes, not shown]`;
    case "resource": {
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      const head = `[resource ${String(resource.uri ?? "")}${resource.mimeType ? ` (${String(resource.mimeType)})` : ""}]`;
      if (typeof resource.text === "string") return `${head}\n${resource.text}`;
      return `${head} ${base64Bytes(resource.blob)} bytes of binary data, not shown`;
    }
    case "resource_link":
      return `[resource link ${String(part.uri ?? "")}${part.name ? ` "${String(part.name)}"` : ""}${part.description ? `: ${String(part.description)}` : ""}]`;
    default:
      return `[${String(part.type ?? "unknown")} content, not shown]`;
  }
}

function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
