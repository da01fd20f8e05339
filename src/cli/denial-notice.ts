import type { ToolRisk } from "../tools/define-tool.js";
import { oneLine, toolSubject } from "./format.js";

/** Quotes a word for a POSIX shell so the suggested flag can be pasted as it is. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The subject permission rules match for the built-in tools: the command of `bash`, the path of the file tools. */
function ruleSubject(name: string, input: unknown): string | undefined {
  if (input === null || typeof input !== "object") return undefined;
  const fields = input as Record<string, unknown>;
  const value = name === "bash" ? fields.command : fields.path;
  return typeof value === "string" && !value.includes("\n") && !value.includes(")") ? value : undefined;
}

/**
 * The message for a call that needed asking when there is no terminal to ask on: which tool, what it would have done,
 * and the flags that would allow it next time (an exact rule, the whole tool, or a permission mode).
 */
export function denialNotice(call: { name: string; input: unknown }, risk: ToolRisk | undefined): string {
  const subject = ruleSubject(call.name, call.input);
  const shown = oneLine(toolSubject(call.name, call.input), 100);
  const ways: string[] = [];
  if (subject !== undefined) ways.push(`--allow ${shellQuote(`${call.name}(${subject})`)} (this exact call)`);
  ways.push(`--allow ${call.name} (every ${call.name} call)`);
  ways.push(
    risk === "write"
      ? "--permission-mode acceptEdits (all file edits)"
      : "--permission-mode bypassPermissions (everything, use with care)",
  );
  return [
    `statecraft: denied ${call.name} ${shown}: it needs permission and there is no terminal to ask (stdin is not a TTY).`,
    `  to allow it, run again with one of:`,
    ...ways.map((way) => `    ${way}`),
  ].join("\n");
}
