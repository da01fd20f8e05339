import { InvalidArgumentError, Option, type Command } from "commander";
import { PERMISSION_MODES, type PermissionMode } from "../permissions/types.js";
import { LOG_LEVELS } from "./log-levels.js";

/** The flags `run` and `chat` share (and `trace fork`, which continues a run), as commander parses them. */
export interface RunFlags {
  cwd?: string;
  /** `--provider openai|anthropic`: the wire the model speaks. */
  provider?: string;
  model?: string;
  baseUrl?: string;
  maxTurns?: number;
  maxToolCalls?: number;
  /** Seconds. */
  timeout?: number;
  permissionMode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  /** `--on-deny end|continue`: what a denied call does to the run. */
  onDeny?: "end" | "continue";
  systemPrompt?: string;
  session?: string;
  /** A file, or false for `--no-trace`; absent for the default `<cwd>/.agent/trace.jsonl`. */
  trace?: string | false;
  logLevel?: string;
  /** `--trust-project`: this run applies the folder's statecraft.config.json in full, as `statecraft trust` would. */
  trustProject?: boolean;
  /** `--mcp-config FILE` (run and chat): MCP servers to start, `{ "mcpServers": { … } }` as in `.mcp.json`. */
  mcpConfig?: string;
  /** `--otel` (run): spans to the OTLP endpoint of the OTEL_* variables. */
  otel?: boolean;
  /** `--sandbox auto|required|off`: the sandbox of the processes the run starts. */
  sandbox?: "auto" | "required" | "off";
}

export function parsePositiveInteger(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError(`${flag} takes a whole number of 1 or more, got ${JSON.stringify(value)}.`);
    }
    return n;
  };
}

export function parsePositiveSeconds(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
      throw new InvalidArgumentError(`${flag} takes a number of seconds greater than 0, got ${JSON.stringify(value)}.`);
    }
    return n;
  };
}

/** A TCP port, 0 meaning "a free one". */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n > 65535) {
    throw new InvalidArgumentError(`--port takes a port number from 0 to 65535 (0: a free one), got ${JSON.stringify(value)}.`);
  }
  return n;
}

export function collect(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === "") throw new InvalidArgumentError("a rule can't be empty; write Tool or Tool(pattern), e.g. bash(npm test).");
  return [...(previous ?? []), value];
}

function nonEmpty(flag: string) {
  return (value: string): string => {
    if (value.trim() === "") throw new InvalidArgumentError(`${flag} can't be empty.`);
    return value;
  };
}

/** `--mcp-config`, for the commands that start a fresh agent (`run`, `chat`). */
export function addMcpFlag(command: Command): Command {
  return command.option(
    "--mcp-config <file>",
    'MCP servers whose tools the agent gets: a JSON file { "mcpServers": { … } } as .mcp.json (the project\'s own .mcp.json is used when the folder is trusted)',
    nonEmpty("--mcp-config"),
  );
}

/** Adds the run flags to a command. Defaults that depend on the environment are applied by `resolveRunSettings`. */
export function addRunFlags(command: Command): Command {
  return command
    .option("-C, --cwd <dir>", "folder the agent works in (tools, .agent/ and statecraft.config.json)", nonEmpty("--cwd"))
    .addOption(new Option("--provider <name>", "the model's wire: openai (any OpenAI-compatible server, the default) or anthropic (default: STATECRAFT_PROVIDER)").choices(["openai", "anthropic"]))
    .option("-m, --model <name>", "model name (anthropic:<name> for Claude), or script:<file.json> for a scripted model", nonEmpty("--model"))
    .option("--base-url <url>", "the provider's server, e.g. http://localhost:11434/v1 (default: OPENAI_BASE_URL, or ANTHROPIC_BASE_URL)", nonEmpty("--base-url"))
    .option("--max-turns <n>", "at most this many model calls (default 8)", parsePositiveInteger("--max-turns"))
    .option("--max-tool-calls <n>", "at most this many tool executions (default 12)", parsePositiveInteger("--max-tool-calls"))
    .option("--timeout <seconds>", "time limit of a run (default 120)", parsePositiveSeconds("--timeout"))
    .addOption(
      new Option("--permission-mode <mode>", "default: ask for edits and commands; acceptEdits; bypassPermissions; plan: read only").choices(
        PERMISSION_MODES,
      ),
    )
    .option("--allow <rule>", "allow calls matching a rule, e.g. bash(npm test) or edit_file (repeatable)", collect)
    .option("--ask <rule>", "always ask before calls matching a rule (repeatable)", collect)
    .option("--deny <rule>", "deny calls matching a rule, e.g. bash(rm *) (repeatable)", collect)
    .addOption(new Option("--on-deny <what>", "what a denied call does: end the run (default, exit 6) or continue (the model is told and goes on)").choices(["end", "continue"]))
    .option("--system-prompt <text>", "system prompt for the model")
    .option("--session <id>", "continue an earlier session (its id is printed at the end of each run)", nonEmpty("--session"))
    .option("--trace <file>", "write the trace to this file (default <cwd>/.agent/trace.jsonl)", nonEmpty("--trace"))
    .option("--no-trace", "write no trace")
    .addOption(new Option("--sandbox <mode>", "sandbox of every process the run starts: auto (default; unsandboxed with a warning where unsupported), required (refuse to run one unsandboxed), off").choices(["auto", "required", "off"]))
    .option("--trust-project", "trust statecraft.config.json in --cwd for this run: its permission mode, allow rules and baseUrl (with your key) apply")
    .addOption(new Option("--log-level <level>", "operational logs on stderr (default warn, or STATECRAFT_LOG_LEVEL)").choices(LOG_LEVELS));
}

/** `--on-ask deny|suspend`. */
export function parseOnAsk(value: string): "deny" | "suspend" {
  if (value === "deny" || value === "suspend") return value;
  throw new InvalidArgumentError(`--on-ask must be deny or suspend, got ${JSON.stringify(value)}`);
}
