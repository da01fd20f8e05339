import { Command, InvalidArgumentError, Option } from "commander";
import { EXIT_CODES } from "../exit-codes.js";
import { LOG_LEVELS } from "../logger.js";
import { parsePositiveInteger, parsePositiveSeconds } from "../run-flags.js";
import { UsageError } from "../usage-error.js";
import { withTraceSource } from "../database-trace.js";
import { AgentError } from "../../errors/agent-error.js";
import { PERMISSION_MODES } from "../../permissions/types.js";
import { replay } from "../../debug/replay.js";
import { scriptOf } from "../../debug/script.js";
import { summarizeSessions, type SessionSummary } from "../../debug/session.js";
import { buildTimeline, excerpt, formatMs, formatTimeline } from "../../debug/timeline.js";
import { forkAction, type ForkFlags } from "./fork-action.js";
import { DEFAULT_TRACE_FILE, pickSession, traceFile, warner, type IO } from "./trace-io.js";

export { DEFAULT_TRACE_FILE };

/** Where the trace commands read and write. The CLI's own context fits; without one, the process's streams. */
export interface TraceCommandContext {
  io?: {
    stdout: NodeJS.WritableStream & { isTTY?: boolean };
    stderr: NodeJS.WritableStream & { isTTY?: boolean };
    stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
    env?: NodeJS.ProcessEnv;
    /** The directory relative paths are resolved against (default `process.cwd()`). */
    cwd?: string;
  };
  /** Set by each command's action: 0 on success, 1 for a replay that diverged, 2 for a usage error, a run's code for fork. */
  exitCode?: number;
}

/**
 * Adds `trace` and its subcommands to a commander program: `trace list`, `trace show`, `trace replay`, `trace fork`,
 * `trace script`. Each action leaves its exit code in `context.exitCode` (or `process.exitCode` without a context).
 */
export function registerTraceCommands(program: Command, context: TraceCommandContext = {}): Command {
  const io = (): IO => ({
    stdout: context.io?.stdout ?? process.stdout,
    stderr: context.io?.stderr ?? process.stderr,
    stdin: context.io?.stdin ?? process.stdin,
    env: context.io?.env ?? process.env,
    cwd: context.io?.cwd ?? process.cwd(),
  });
  const done = (code: number) => {
    if (context.io || context.exitCode !== undefined) context.exitCode = code;
    else process.exitCode = code;
  };
  /**
   * Runs an action; a problem with what was asked (no such file or session, a bad seq) is a message and exit 2, the
   * same for every trace command (a trace that holds the session but can't be read as a run is replay's divergence).
   */
  const action =
    <A extends unknown[]>(run: (io: IO, ...args: A) => Promise<number>) =>
    async (...args: A) => {
      const streams = io();
      try {
        done(await run(streams, ...args));
      } catch (error) {
        if (error instanceof AgentError || error instanceof UsageError) {
          streams.stderr.write(`statecraft: ${error.message.replace(/^statecraft: /, "")}\n`);
          done(EXIT_CODES.usage);
          return;
        }
        throw error;
      }
    };

  const trace = program
    .command("trace")
    .description("look into recorded runs: list them, show one as a timeline, replay it offline, fork it, make it a test case")
    .addHelpText(
      "after",
      [
        "",
        `Every command reads a trace file (default ${DEFAULT_TRACE_FILE}); runs append to <cwd>/.agent/trace.jsonl.`,
        "",
        "Examples:",
        "  statecraft trace list",
        "  statecraft trace show --last",
        "  statecraft trace replay --session 3f2a9c1e",
        "  statecraft trace fork --session 3f2a9c1e --at 12 --model gpt-4o",
        "  statecraft trace script --session 3f2a9c1e > case.json",
      ].join("\n"),
    );

  trace
    .command("list")
    .description("one line per session: id, start, stop reason, turns, tool calls, tokens, duration, the request")
    .argument("[file]", `trace file (default ${DEFAULT_TRACE_FILE})`)
    .option("--json", "one JSON object per session and line")
    .option("--database <url>", "read the trace lines statecraft/dbos workers wrote to this PostgreSQL (default when no file: STATECRAFT_DATABASE_URL)")
    .action(
      action(async (streams, file: string | undefined, flags: { json?: boolean; database?: string }) => {
        const summaries = await withTraceSource(streams.env, file, flags, () => traceFile(streams, file), (path) => summarizeSessions(path, { onWarning: warner(streams) }));
        if (flags.json) {
          for (const s of summaries) streams.stdout.write(`${JSON.stringify(s)}\n`);
          return 0;
        }
        if (summaries.length === 0) {
          streams.stdout.write("no sessions in this trace\n");
          return 0;
        }
        streams.stdout.write(`${formatList(summaries)}\n`);
        return 0;
      }),
    );

  trace
    .command("show")
    .description("a session as a timeline: what happened in each state, where the time went, tokens per turn")
    .argument("[file]", `trace file (default ${DEFAULT_TRACE_FILE})`)
    .option("--session <id>", "the session (its id, or the start of it); default the last one")
    .addOption(new Option("--last", "the session that started last (the default)").conflicts("session"))
    .option("--json", "the timeline as one JSON object")
    .option("--database <url>", "read the trace lines statecraft/dbos workers wrote to this PostgreSQL (default when no file: STATECRAFT_DATABASE_URL)")
    .action(
      action(async (streams, file: string | undefined, flags: { session?: string; last?: boolean; json?: boolean; database?: string }) => {
        const session = await withTraceSource(streams.env, file, flags, () => traceFile(streams, file), (path) => pickSession(streams, path, flags.session));
        const timeline = buildTimeline(session);
        streams.stdout.write(flags.json ? `${JSON.stringify(timeline)}\n` : `${formatTimeline(timeline)}\n`);
        return 0;
      }),
    );

  trace
    .command("replay")
    .description("re-run a recorded session through the engine with its recorded model outputs, tool results and decisions; compare")
    .argument("[file]", `trace file (default ${DEFAULT_TRACE_FILE})`)
    .option("--session <id>", "the session (its id, or the start of it); default the last one")
    .option("--json", "the result as one JSON object")
    .option("--database <url>", "read the trace lines statecraft/dbos workers wrote to this PostgreSQL (default when no file: STATECRAFT_DATABASE_URL)")
    .addHelpText(
      "after",
      [
        "",
        "Nothing runs for real: no model, no network, no tool side effects, no questions; the recorded ones are played back.",
        "Exit codes: 0 identical, 1 diverged (the first divergence is printed, with the lines around it), 2 no such trace file or session, or another usage error.",
      ].join("\n"),
    )
    .action(
      action(async (streams, file: string | undefined, flags: { session?: string; json?: boolean; database?: string }) => {
        const session = await withTraceSource(streams.env, file, flags, () => traceFile(streams, file), (path) => pickSession(streams, path, flags.session));
        const result = await replay(session);
        if (flags.json) {
          const { replayed: _replayed, ...rest } = result;
          streams.stdout.write(`${JSON.stringify(rest)}\n`);
        } else if (result.identical) {
          streams.stdout.write(
            `identical: session ${session.sessionId} replayed through the engine (${result.lines} lines${result.runs > 1 ? `, ${result.runs} runs` : ""}): same states, tool calls, decisions and stop\n`,
          );
        } else {
          const d = result.divergence!;
          streams.stdout.write(`${[d.message, `  ${d.reason}`, ...d.context.map((line) => `  ${line}`)].join("\n")}\n`);
        }
        return result.identical ? 0 : 1;
      }),
    );

  const forkCommand = trace
    .command("fork")
    .description("continue a recorded session live from one of its lines, as a new session (another model, prompt or limits)")
    .argument("[file]", `trace file (default ${DEFAULT_TRACE_FILE})`)
    .requiredOption("--session <id>", "the session to fork (its id, or the start of it)")
    .requiredOption("--at <seq>", "the seq of the line to fork at (see trace show)", parseSeq)
    .option("--run <n>", "the run of the session the seq is in, when it has several (default the last)", parsePositiveInteger("--run"))
    .option("--prompt <text>", "a new user message after the rebuilt conversation")
    .option("-C, --cwd <dir>", "folder the fork works in (default this folder; never the recorded run's unless -C names it)")
    .option("--database <url>", "fork a session statecraft/dbos workers wrote to this PostgreSQL (default when no file: STATECRAFT_DATABASE_URL); the fork itself runs here")
    .option("-m, --model <name>", "model name on the OpenAI-compatible server, or script:<file.json> for a scripted model")
    .option("--base-url <url>", "OpenAI-compatible server (default: OPENAI_BASE_URL)")
    .option("--max-turns <n>", "at most this many model calls (default the recorded run's)", parsePositiveInteger("--max-turns"))
    .option("--max-tool-calls <n>", "at most this many tool executions (default the recorded run's)", parsePositiveInteger("--max-tool-calls"))
    .option("--timeout <seconds>", "time limit (default the recorded run's)", parsePositiveSeconds("--timeout"))
    .addOption(new Option("--permission-mode <mode>", "permission mode (default: run's; the recorded mode is shown, never applied)").choices(PERMISSION_MODES))
    .option("--allow <rule>", "allow calls matching a rule (repeatable)", collectRule)
    .option("--ask <rule>", "always ask before calls matching a rule (repeatable)", collectRule)
    .option("--deny <rule>", "deny calls matching a rule (repeatable)", collectRule)
    .option("--system-prompt <text>", "system prompt (default the recorded run's)")
    .option("--trace <file>", "write the fork's trace here (default the trace file it was forked from; from --database, <folder>/.agent/trace.jsonl)")
    .option("--no-trace", "write no trace")
    .option("--trust-project", "trust statecraft.config.json in the fork's folder for this run (as statecraft trust would)")
    .addOption(new Option("--log-level <level>", "operational logs on stderr").choices(LOG_LEVELS))
    .option("--json", "print one AgentEvent per line (NDJSON) on stdout")
    .addHelpText(
      "after",
      [
        "",
        "The fork uses the built-in tools. Options not given are the recorded run's (limits, system prompt, folder),",
        "except permissions: they are this command line's, as for run (a trace can come from anywhere); the recorded",
        "mode and allow rules are shown, not applied, and without permission flags the recorded ask and deny rules apply.",
        "Its trace lines carry parentSession; its first line forkedAt: { sessionId, seq }.",
        "A seq inside a tool batch (parse_tool_call … execute_tool) keeps the model's recorded response and runs that",
        "batch again, live, under the fork's options. Exit codes are run's: 0 final_answer, 3 max_turns, 4 max_tool_calls,",
        "5 timeout, 6 permission_denied, 7 tool_error, 8 model_error, 130 user_abort, 2 usage error.",
      ].join("\n"),
    )
    .action(action((streams, file: string | undefined, flags: ForkFlags, cmd: Command) => forkAction(streams, file, { ...cmd.optsWithGlobals(), ...flags })));
  void forkCommand;

  trace
    .command("script")
    .description("write a session's model outputs as a scripted-model file: run it again with --model script:<file>")
    .argument("[file]", `trace file (default ${DEFAULT_TRACE_FILE})`)
    .option("--session <id>", "the session (its id, or the start of it); default the last one")
    .addOption(new Option("--last", "the session that started last (the default)").conflicts("session"))
    .option("--run <n>", "only this run of the session (default all, in order)", parsePositiveInteger("--run"))
    .option("--database <url>", "read the trace lines statecraft/dbos workers wrote to this PostgreSQL (default when no file: STATECRAFT_DATABASE_URL)")
    .addHelpText("after", ["", 'Example: statecraft trace script --session 3f2a9c1e > case.json && statecraft run --model script:case.json "<same request>"'].join("\n"))
    .action(
      action(async (streams, file: string | undefined, flags: { session?: string; last?: boolean; run?: number; database?: string }) => {
        const session = await withTraceSource(streams.env, file, flags, () => traceFile(streams, file), (path) => pickSession(streams, path, flags.session));
        const script = scriptOf(session, flags.run !== undefined ? { run: flags.run } : {});
        streams.stdout.write(`${JSON.stringify(script, null, 2)}\n`);
        for (const note of script.notes ?? []) streams.stderr.write(`statecraft: note: ${note}\n`);
        return 0;
      }),
    );

  return trace;
}

function parseSeq(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`--at takes the seq of a line (a whole number of 0 or more), got ${JSON.stringify(value)}.`);
  return n;
}

function collectRule(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === "") throw new InvalidArgumentError("a rule can't be empty; write Tool or Tool(pattern), e.g. bash(npm test).");
  return [...(previous ?? []), value];
}

/** The sessions as a table: one line each, the id in full so it can be copied. */
export function formatList(summaries: readonly SessionSummary[]): string {
  const rows = summaries.map((s) => [
    s.sessionId,
    formatStart(s.startedAt),
    s.reason ?? "(running or cut off)",
    String(s.turns),
    String(s.toolCalls),
    String(s.tokens.input + s.tokens.output),
    formatMs(s.durationMs),
    `${s.forkedAt ? `(fork of ${s.forkedAt.sessionId.slice(0, 8)} at seq ${s.forkedAt.seq}) ` : s.parentSession ? `(sub of ${s.parentSession.slice(0, 8)}) ` : ""}${s.runs > 1 ? `[${s.runs} runs] ` : ""}${excerpt(s.request, 60)}`,
  ]);
  const header = ["session", "started", "stop", "turns", "tools", "tokens", "duration", "request"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
  return [line(header), ...rows.map(line)].join("\n");
}

function formatStart(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "?";
  const d = new Date(t);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
