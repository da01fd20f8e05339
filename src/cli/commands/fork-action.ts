import { resolve } from "node:path";
import { colorsEnabled, createStyle, type Style } from "../colors.js";
import { resolveRunSettings } from "../config.js";
import { traceDatabase, withTraceSource } from "../database-trace.js";
import { EXIT_CODES, exitCodeFor } from "../exit-codes.js";
import { listenForInterrupts } from "../interrupts.js";
import { createLogger, resolveLogLevel } from "../logger.js";
import { createModel } from "../model-factory.js";
import { createTerminalPrompter, type PermissionPrompter } from "../prompt.js";
import { HumanRenderer, JsonRenderer, type Renderer } from "../render.js";
import type { RunFlags } from "../run-flags.js";
import type { AgentEvent } from "../../events.js";
import type { PermissionOptions } from "../../permissions/types.js";
import { builtinTools } from "../../tools/builtin/index.js";
import { fork } from "../../debug/fork.js";
import { forkPermissions } from "../../debug/fork-permissions.js";
import { analyseRun } from "../../debug/recording.js";
import { splitRuns } from "../../debug/session.js";
import { DEMO_MODEL_NAME } from "../../demo/workspace.js";
import { pickSession, traceFile, type IO } from "./trace-io.js";

/** `trace fork`'s flags: the run flags (a fork continues as a run) plus where to fork and what to say. */
export interface ForkFlags extends Omit<RunFlags, "session"> {
  session: string;
  database?: string;
  at: number;
  run?: number;
  prompt?: string;
  json?: boolean;
  color?: boolean;
}

/** `trace fork`: the run of the fork, rendered like `statecraft run`; the exit code is the run's. */
export async function forkAction(streams: IO, file: string | undefined, flags: ForkFlags): Promise<number> {
  const path = traceFile(streams, file);
  // From a database (statecraft/dbos), the session is read there; the fork runs in this process, so it is recorded
  // like any local run: in the .agent/ of the folder it works in (--trace names another file).
  const database = traceDatabase(streams.env, file, flags);
  const session = await withTraceSource(streams.env, file, flags, () => path, (copy) => pickSession(streams, copy, flags.session));
  if (database !== undefined) delete session.file;
  const runs = splitRuns(session.lines);
  const recorded = analyseRun(runs[(flags.run ?? runs.length) - 1] ?? runs[runs.length - 1], 0).options;
  const logger = createLogger(resolveLogLevel(flags.logLevel, streams.env));
  // The fork goes on with the model the run used, like its other options, unless --model names another.
  const recordedModel = flags.model === undefined ? reusableModel(recorded?.model) : undefined;
  // The model, the folder and the permissions are resolved like `run`'s (flags, environment, statecraft.config.json
  // in the folder as far as the folder is trusted, the user's config); the fork's trace is chosen below.
  const settings = resolveRunSettings(
    {
      // The fork works in -C or the folder it is started in, never the folder the trace names: a trace can come from
      // anywhere, and its recorded cwd would choose what the fork's tools read and write.
      ...(flags.cwd !== undefined ? { cwd: flags.cwd } : {}),
      ...(flags.model !== undefined ? { model: flags.model } : recordedModel !== undefined ? { model: recordedModel } : {}),
      ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
      ...(flags.permissionMode !== undefined ? { permissionMode: flags.permissionMode } : {}),
      ...(flags.allow ? { allow: flags.allow } : {}),
      ...(flags.ask ? { ask: flags.ask } : {}),
      ...(flags.deny ? { deny: flags.deny } : {}),
      ...(flags.trustProject ? { trustProject: true } : {}),
      trace: false,
    },
    streams.env,
    streams.cwd,
  );
  for (const warning of settings.warnings) streams.stderr.write(`statecraft: ${warning}\n`);
  const created = await createModel(settings.model, logger);
  const json = flags.json === true;
  const noColor = flags.color === false;
  const out: Style = createStyle(colorsEnabled(streams.stdout as never, streams.env, noColor));
  const err: Style = createStyle(colorsEnabled(streams.stderr as never, streams.env, noColor));
  const onTerminal = streams.stdout.isTTY === true;
  const renderer: Renderer = json
    ? new JsonRenderer(streams.stdout as never)
    : new HumanRenderer(streams.stdout as never, { style: out, spinner: onTerminal, thinking: onTerminal });

  const controller = new AbortController();
  const interrupt = () => {
    if (controller.signal.aborted) return;
    (json ? (t: string) => streams.stderr.write(`${t}\n`) : (t: string) => renderer.line(t))(err.yellow("interrupted: stopping the fork (Ctrl-C again to quit at once)"));
    controller.abort();
  };
  const interactive = streams.stdin.isTTY === true && typeof streams.stdin.setRawMode === "function";
  const prompter: PermissionPrompter | undefined = interactive
    ? createTerminalPrompter({
        input: streams.stdin as never,
        output: (json ? streams.stderr : streams.stdout) as never,
        style: json ? err : out,
        beforeAsk: () => renderer.pause(),
        onInterrupt: interrupt,
      })
    : undefined;
  const { base, recordedNote } = forkPermissions(settings.permissions, flags, recorded?.permissions);
  const permissions: PermissionOptions = { ...base, ...(prompter ? { onAsk: (request) => prompter.ask(request) } : {}) };

  const run = fork(session, {
    at: flags.at,
    ...(flags.run !== undefined ? { run: flags.run } : {}),
    ...(flags.prompt !== undefined ? { prompt: flags.prompt } : {}),
    model: created.model,
    tools: builtinTools(),
    cwd: settings.cwd,
    permissions,
    signal: controller.signal,
    logger,
    ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
    ...(flags.maxToolCalls !== undefined ? { maxToolCalls: flags.maxToolCalls } : {}),
    ...(flags.timeout !== undefined ? { timeoutMs: Math.round(flags.timeout * 1000) } : {}),
    ...(flags.systemPrompt !== undefined ? { systemPrompt: flags.systemPrompt } : {}),
    ...(flags.trace === false ? { traceFile: false as const } : flags.trace !== undefined ? { traceFile: resolve(streams.cwd, flags.trace) } : {}),
  });
  const say = (text: string) => (json ? streams.stderr : streams.stdout).write(`${text}\n`);
  say(
    (json ? err : out).dim(
      `fork of session ${session.sessionId} at seq ${flags.at}: new session ${run.sessionId}, model ${created.description}${recordedModel !== undefined ? " (the recorded one; --model for another)" : ""}, cwd ${settings.cwd}, permissions ${base.mode ?? "default"}`,
    ),
  );
  if (recordedNote !== undefined) say((json ? err : out).yellow(recordedNote));
  const stopListening = listenForInterrupts((count) => {
    if (count === 1) return interrupt();
    prompter?.cancel();
    renderer.close();
    streams.stderr.write("statecraft: quit\n");
    process.exit(EXIT_CODES.user_abort);
  });
  let end: Extract<AgentEvent, { type: "turn_end" }> | undefined;
  try {
    for await (const event of run) {
      renderer.event(event);
      if (event.type === "turn_end") end = event;
    }
  } finally {
    stopListening();
    prompter?.cancel();
    renderer.close();
  }
  if (!end) throw new Error("the fork ended without a turn_end event");
  const traceOut =
    flags.trace === false ? undefined : flags.trace !== undefined ? resolve(streams.cwd, flags.trace) : database !== undefined ? resolve(settings.cwd, ".agent", "trace.jsonl") : resolve(path);
  say((json ? err : out).dim(`fork: session ${run.sessionId} (parent ${session.sessionId}, forked at seq ${flags.at})${traceOut ? `; trace: ${traceOut}` : ""}`));
  return exitCodeFor(end.reason);
}


/**
 * The recorded model's name when a fork can ask for it again: a scripted model's (`script`, `script:<file>`, the
 * demo's) cannot go on from the middle of a run, so the fork's model is then chosen as `run` chooses one.
 */
function reusableModel(name: string | undefined): string | undefined {
  if (name === undefined || name.trim() === "" || name === "script" || name.startsWith("script:") || name === DEMO_MODEL_NAME) return undefined;
  return name;
}
