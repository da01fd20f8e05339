import type { CliContext } from "../context.js";
import { UsageError } from "../usage-error.js";
import { setupOutput } from "../context.js";
import { readPrompt } from "../read-prompt.js";
import { executeRun } from "../run-agent.js";
import type { RunFlags } from "../run-flags.js";
import { closeAgent, headerLine, prepareAgent, type PreparedAgent } from "./prepare-agent.js";
import { runSurface } from "./run-surface.js";
import { startOtelExport } from "../otel-export.js";

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
  if (!json && io.stdout.isTTY === true) io.stdout.write(`${headerLine(output.out, prepared)}\n`);
  // A prompt piped on stdin leaves the terminal free to ask permission questions on.
  const surface = runSurface(io, output, json);
  const exporting = prepared.params.otel ? await startOtelExport() : undefined;
  const outcome = await executeRun({
    prompt,
    params: prepared.params,
    model: prepared.created.model,
    tools: prepared.tools,
    ...surface.options,
    ...(flags.inspect ? { inspect: flags.port !== undefined ? { port: flags.port } : {} } : {}),
    ...(flags.onAsk ? { onAsk: flags.onAsk } : {}),
    ...(exporting ? { observers: [exporting.observer] } : {}),
  }).finally(async () => {
    surface.close();
    // The spans still buffered go out before the command returns (and the process exits).
    await exporting?.shutdown().catch((error: Error) => io.stderr.write(`statecraft: sending spans failed: ${error.message}\n`));
  });
  if (!json && outcome.traceFile !== false) io.stdout.write(`${output.out.dim(`trace: ${outcome.traceFile}`)}\n`);
  return outcome.exitCode;
}

