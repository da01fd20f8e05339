import { defineTool, type ToolDefinition } from "../define-tool.js";
import { runInProcessGroup } from "../process.js";
import { checkBuiltinOptions, type BuiltinToolOptions } from "./options.js";

export interface BashInput {
  command: string;
  timeoutMs?: number;
}

/** Time a command gets when the call doesn't say. */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
/** The longest `timeoutMs` a call may ask for. */
export const MAX_BASH_TIMEOUT_MS = 600_000;
/** Bytes kept per stream (head and tail) so stdout and stderr both fit the tool's output limit. */
export const BASH_STREAM_BYTES = 12_000;

function section(label: string, text: string): string {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return `${label}:\n${body}`;
}

/**
 * `bash { command, timeoutMs? }`: runs a shell command in the workspace, in its own process group. On timeout or
 * abort the whole group is killed (grandchildren included), and whatever the command leaves running is killed
 * when it exits. A non-zero exit is an error result with the exit code, stdout and stderr.
 */
export function bashTool(options: BuiltinToolOptions = {}): ToolDefinition<BashInput, "bash"> {
  checkBuiltinOptions(options);
  return defineTool<BashInput, "bash">({
    name: "bash",
    description:
      "Run a shell command (bash) in the workspace root and get its exit code, stdout and stderr. Use it to run " +
      "tests, builds, git and other programs. Each call is a fresh shell: `cd` and variables don't carry over, so " +
      "chain steps with `&&` in one command. There is no terminal and no input: use non-interactive flags (`-y`, " +
      "`--no-pager`). Background processes are killed when the command finishes, so don't start servers expecting " +
      `them to keep running. \`timeoutMs\` (default ${DEFAULT_BASH_TIMEOUT_MS}, at most ${MAX_BASH_TIMEOUT_MS}) ` +
      "kills the command and everything it started when it runs too long. Long output is cut in the middle. Prefer " +
      "read_file, grep, glob and list_dir for reading and searching files.",
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", minLength: 1, description: "The command line to run with bash -c." },
        timeoutMs: {
          type: "integer",
          minimum: 1,
          maximum: MAX_BASH_TIMEOUT_MS,
          description: `Kill the command after this many milliseconds. Default ${DEFAULT_BASH_TIMEOUT_MS}.`,
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    risk: "exec",
    permissionSubject: (input) => input.command,
    permissionSubjectKind: "command",
    async execute(input, context) {
      const timeoutMs = input.timeoutMs ?? DEFAULT_BASH_TIMEOUT_MS;
      const outcome = await runInProcessGroup(input.command, {
        cwd: context.cwd,
        signal: context.signal,
        timeoutMs,
        maxStreamBytes: BASH_STREAM_BYTES,
        additionalDirectories: options.additionalDirectories ?? [],
      });
      const lines: string[] = [];
      if (outcome.timedOut) lines.push(`command timed out after ${timeoutMs} ms; it and every process it started were killed`);
      else if (outcome.aborted) lines.push("command was aborted; it and every process it started were killed");
      lines.push(`exit code: ${outcome.exitCode}`);
      if (outcome.signal) lines.push(`signal: ${outcome.signal}`);
      if (outcome.stdout === "" && outcome.stderr === "") lines.push("(no output)");
      if (outcome.stdout !== "") lines.push(section("stdout", outcome.stdout));
      if (outcome.stderr !== "") lines.push(section("stderr", outcome.stderr));
      // The sandbox's proxy refused these: said to the model (it sees why the download failed) and kept in the trace.
      const refused = outcome.refused.map((r) => `${r.host}:${r.port}`);
      if (refused.length > 0) lines.push(`sandbox: connections refused (not in sandbox.network.allow): ${[...new Set(refused)].join(", ")}`);
      const content = lines.join("\n");
      const failed = outcome.exitCode !== 0 || outcome.timedOut || outcome.aborted || outcome.signal !== null;
      if (refused.length > 0) return { content, isError: failed, details: { sandbox: outcome.sandbox, refused: outcome.refused.map((r) => ({ ...r })) } };
      return failed ? { content, isError: true } : content;
    },
  });
}
