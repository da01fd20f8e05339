import type { ToolResult } from "../models/messages.js";
import type { RunUsage } from "../events.js";

/** `850ms`, `1.2s`, `2m 05s`. */
export function formatDuration(ms: number): string {
  const safe = Math.max(0, Math.round(ms));
  if (safe < 1000) return `${safe}ms`;
  if (safe < 60_000) return `${(safe / 1000).toFixed(1)}s`;
  const minutes = Math.floor(safe / 60_000);
  const seconds = Math.floor((safe % 60_000) / 1000);
  return `${minutes}m ${String(seconds).padStart(2, "0")}s`;
}

/** `1,234`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** `1,234 tokens (1,000 in, 234 out)`, plus cached and reasoning counts when a provider reported them. */
export function formatUsage(usage: RunUsage): string {
  const total = usage.input + usage.output;
  const parts = [`${formatCount(usage.input)} in`, `${formatCount(usage.output)} out`];
  if (usage.cached > 0) parts.push(`${formatCount(usage.cached)} cached`);
  if (usage.reasoning > 0) parts.push(`${formatCount(usage.reasoning)} reasoning`);
  return `${plural(total, "token")} (${parts.join(", ")})`;
}

/** One line, at most `max` characters: newlines shown as `⏎`, the rest cut with `…`. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\r?\n/g, "⏎").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, Math.max(1, max - 1))}…` : flat;
}

function field(input: unknown, key: string): string | undefined {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  const value = (input as Record<string, unknown>)[key];
  return typeof value === "string" ? value : undefined;
}

function compactJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The argument that matters for a tool call, for its one-line summary: the command of `bash`, the path of the file
 * tools, the pattern of `glob`/`grep`. Anything else (another tool, an input the tool would reject) as compact JSON,
 * so a mistaken call shows what the model actually sent.
 */
export function toolSubject(name: string, input: unknown): string {
  const path = field(input, "path");
  switch (name) {
    case "bash": {
      const command = field(input, "command");
      if (command !== undefined) return command;
      break;
    }
    case "read_file":
    case "write_file":
    case "edit_file":
      if (path !== undefined) return path;
      break;
    case "list_dir":
      if (path !== undefined || input === null || typeof input !== "object" || Object.keys(input).length === 0) return path ?? ".";
      break;
    case "glob":
    case "grep": {
      const pattern = field(input, "pattern");
      if (pattern !== undefined) {
        const glob = field(input, "glob");
        return `${pattern}${path !== undefined ? ` in ${path}` : ""}${glob !== undefined ? ` (${glob})` : ""}`;
      }
      break;
    }
  }
  return compactJson(input);
}

/** The exit code a `bash` result reports in its `exit code: N` line, if it has one. */
export function exitCodeOf(content: string): number | undefined {
  const match = /^exit code: (-?\d+)\s*$/m.exec(content);
  return match ? Number(match[1]) : undefined;
}

const LISTING_TOOLS = new Set(["read_file", "list_dir", "glob", "grep"]);

/**
 * What a tool call produced, in a few words: the exit code of a command, the error's first line, the size of a
 * listing or file read, or the first line of what another tool said ("Edited a.js: replaced 1 occurrence.").
 */
export function toolOutcome(name: string, result: ToolResult): string {
  const exit = exitCodeOf(result.content);
  if (name === "bash" && exit !== undefined) return `exit ${exit}`;
  const lines = result.content.split("\n");
  while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
  const first = lines.find((line) => line.trim() !== "");
  if (result.isError) return oneLine((first ?? "error").replace(/^Error: /, ""), 80);
  if (first === undefined) return "no output";
  if (lines.length === 1 && first.length <= 60) return first.trim();
  if (!LISTING_TOOLS.has(name) && first.length <= 70) return first.trim();
  return plural(lines.length, "line");
}
