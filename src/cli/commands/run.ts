import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { setupOutput } from "../context.js";
import { readPrompt } from "../read-prompt.js";
import { HumanRenderer, JsonRenderer } from "../render.js";
import { executeRun } from "../run-agent.js";
import { addRunFlags, type RunFlags } from "../run-flags.js";
import { headerLine, prepareAgent } from "./prepare-agent.js";

interface RunCommandFlags extends RunFlags {
  json?: boolean;
  color?: boolean;
}

/** `statecraft run [prompt...]`: one agent run in --cwd with the built-in tools; the exit code says how it stopped. */
export async function runAction(promptArgs: string[], flags: RunCommandFlags, context: CliContext): Promise<number> {
  const { io } = context;
  const output = setupOutput(io, flags);
  // Configuration first: with no model the command fails at once, before waiting for a prompt on stdin.
  const prepared = await prepareAgent(flags, io, output.logger);
  const prompt = await readPrompt(promptArgs, io.stdin);
  const json = flags.json === true;
  const onTerminal = io.stdout.isTTY === true;
  const renderer = json
    ? new JsonRenderer(io.stdout)
    : new HumanRenderer(io.stdout, { style: output.out, spinner: onTerminal, thinking: onTerminal });
  if (!json && onTerminal) io.stdout.write(`${headerLine(output.out, prepared)}\n`);
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
  });
  if (!json && outcome.traceFile !== false) io.stdout.write(`${output.out.dim(`trace: ${outcome.traceFile}`)}\n`);
  return outcome.exitCode;
}

export const runCommand: CliCommand = {
  name: "run",
  register(program: Command, context: CliContext) {
    const command = program
      .command("run")
      .description("run the agent once on a prompt (the argument, or stdin) in --cwd, with the built-in tools")
      .argument("[prompt...]", "what the agent should do; read from stdin when absent");
    addRunFlags(command)
      .option("--json", "print one AgentEvent per line (NDJSON) on stdout, nothing else")
      .addHelpText(
        "after",
        [
          "",
          "Model: --model/--base-url, else OPENAI_API_KEY, OPENAI_BASE_URL and STATECRAFT_MODEL, else statecraft.config.json in --cwd.",
          "",
          "Exit codes: 0 final_answer, 3 max_turns, 4 max_tool_calls, 5 timeout, 6 permission_denied, 7 tool_error,",
          "            8 model_error, 130 user_abort, 2 usage error, 1 crash.",
          "",
          "Examples:",
          '  OPENAI_BASE_URL=http://localhost:11434/v1 STATECRAFT_MODEL=qwen2.5:7b statecraft run "fix the failing test"',
          '  statecraft run --model script:case.json "same request as recorded"',
          '  git diff | statecraft run --json --permission-mode plan "review this diff" > events.ndjson',
        ].join("\n"),
      )
      .action(async (promptArgs: string[], flags: RunCommandFlags, cmd: Command) => {
        context.exitCode = await runAction(promptArgs, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
