import type { CliContext } from "../context.js";
import { UsageError } from "../usage-error.js";
import { setupOutput } from "../context.js";
import { canAsk } from "../io.js";
import { readPrompt } from "../read-prompt.js";
import { openControllingTerminal } from "../terminal-input.js";
import { HumanRenderer, JsonRenderer } from "../render.js";
import { executeRun } from "../run-agent.js";
import type { RunFlags } from "../run-flags.js";
import { closeAgent, headerLine, prepareAgent, type PreparedAgent } from "./prepare-agent.js";

export interface RunCommandFlags extends RunFlags {
  json?: boolean;
  color?: boolean;
  inspect?: boolean;
  port?: number;
  onAsk?: "deny" | "suspend";
}

/** `statecraft run [prompt...]`: one agent run in --cwd with the built-in tools; the exit code says how it stopped. */
export async function runAction(promptArgs: string[], flags: RunCommandFlags, context: CliContext): Promise<number> {
  const { io } = context;
  if (flags.port !== undefined && !flags.inspect) throw new UsageError("--port goes with --inspect (the inspector's port).");
  const output = setupOutput(io, flags);
  // Configuration first: with no model the command fails at once, before waiting for a prompt on stdin.
  const prepared = await prepareAgent(flags, io, output.logger);
  // The MCP servers started for this run end with it, however it ends.
  try {
    return await runPrepared(promptArgs, flags, context, output, prepared);
  } finally {
    await closeAgent(prepared);
  }
}

async function runPrepared(
  promptArgs: string[],
  flags: RunCommandFlags,
  { io }: CliContext,
  output: ReturnType<typeof setupOutput>,
  prepared: PreparedAgent,
): Promise<number> {
  const prompt = await readPrompt(promptArgs, io.stdin);
  const json = flags.json === true;
  const onTerminal = io.stdout.isTTY === true;
  const renderer = json
    ? new JsonRenderer(io.stdout)
    : new HumanRenderer(io.stdout, { style: output.out, spinner: onTerminal, thinking: onTerminal });
  if (!json && onTerminal) io.stdout.write(`${headerLine(output.out, prepared)}\n`);
  // A prompt piped on stdin leaves the terminal free to ask permission questions on.
  const questionsOn = json ? io.stderr : io.stdout;
  const terminal = !canAsk(io) && questionsOn.isTTY === true ? openControllingTerminal() : undefined;
  const outcome = await executeRun({
    prompt,
    params: prepared.params,
    model: prepared.created.model,
    tools: prepared.tools,
    io,
    renderer,
    json,
    errStyle: output.err,
    promptStyle: json ? output.err : output.out,
    logger: output.logger,
    ...(terminal ? { askInput: terminal } : {}),
    ...(flags.inspect ? { inspect: flags.port !== undefined ? { port: flags.port } : {} } : {}),
    ...(flags.onAsk ? { onAsk: flags.onAsk } : {}),
  }).finally(() => terminal?.destroy());
  if (!json && outcome.traceFile !== false) io.stdout.write(`${output.out.dim(`trace: ${outcome.traceFile}`)}\n`);
  return outcome.exitCode;
}

