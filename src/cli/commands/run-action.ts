import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { UserMessageInput } from "../../models/input.js";
import { sniffImageType } from "../../models/media-type.js";
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
  outputSchema?: string;
  image?: string[];
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
  const text = await readPrompt(promptArgs, io.stdin);
  const prompt = flags.image?.length ? withImages(text, flags.image, prepared.params.cwd) : text;
  const schema = flags.outputSchema !== undefined ? readSchema(flags.outputSchema, prepared.params.cwd) : undefined;
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
    ...(schema ? { output: schema } : {}),
  }).finally(async () => {
    surface.close();
    // The spans still buffered go out before the command returns (and the process exits).
    await exporting?.shutdown().catch((error: Error) => io.stderr.write(`statecraft: sending spans failed: ${error.message}\n`));
  });
  // The validated answer, as the schema parsed it (--json has it in turn_end).
  if (!json && outcome.end?.output !== undefined) io.stdout.write(`${JSON.stringify(outcome.end.output, null, 2)}\n`);
  if (!json && outcome.traceFile !== false) io.stdout.write(`${output.out.dim(`trace: ${outcome.traceFile}`)}\n`);
  return outcome.exitCode;
}


/** `--output-schema FILE`: a JSON Schema object, read relative to the run's folder. */
function readSchema(file: string, cwd: string): Record<string, unknown> {
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(resolve(cwd, file), "utf8")) as unknown;
  } catch (error) {
    throw new UsageError(`--output-schema ${file}: ${(error as Error).message}`);
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) throw new UsageError(`--output-schema ${file}: the file must hold a JSON Schema object, e.g. { "type": "object", "properties": { ... } }`);
  return schema as Record<string, unknown>;
}

/** `--image FILE`: the prompt as a user message with the images after its text. */
function withImages(text: string, files: readonly string[], cwd: string): UserMessageInput {
  const images = files.map((file) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(resolve(cwd, file));
    } catch (error) {
      throw new UsageError(`--image ${file}: ${(error as Error).message}`);
    }
    const mediaType = sniffImageType(bytes);
    if (!mediaType) throw new UsageError(`--image ${file}: not a PNG, JPEG, GIF or WebP image`);
    return { type: "image" as const, image: new Uint8Array(bytes), mediaType };
  });
  return { role: "user", content: [{ type: "text", text }, ...images] };
}
