import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { addMcpFlag, addRunFlags, collect, parseOnAsk, parsePort } from "../run-flags.js";
import type { RunCommandFlags } from "./run-action.js";

export const runCommand: CliCommand = {
  name: "run",
  register(program: Command, context: CliContext) {
    const command = program
      .command("run")
      .description("run the agent once on a prompt (the argument, or stdin) in --cwd, with the built-in tools")
      .argument("[prompt...]", "what the agent should do; read from stdin when absent");
    addMcpFlag(addRunFlags(command))
      .option("--json", "print one AgentEvent per line (NDJSON) on stdout, nothing else")
      .option("--inspect", "serve the browser inspector for this run (its address is printed on stderr before the first model call)")
      .option("--port <n>", "the inspector's port with --inspect (default: a free one)", parsePort)
      .option("--otel", "send the run's OpenTelemetry spans to the OTLP endpoint of the OTEL_* variables (needs the OpenTelemetry SDK packages)")
      .option("--output-schema <file>", "a JSON Schema file: the final answer must match it (checked, asked again on a mismatch); the validated value is printed (--json: in turn_end)")
      .option("--image <file>", "attach an image (PNG, JPEG, GIF or WebP) to the prompt (repeatable)", collect)
      .option("--on-ask <what>", "what a permission question gets when no terminal can answer it: deny (default) or suspend (exit 10; statecraft resume goes on)", parseOnAsk)
      .addHelpText(
        "after",
        [
          "",
          "Model: --model/--base-url, else OPENAI_API_KEY, OPENAI_BASE_URL and STATECRAFT_MODEL, else statecraft.config.json in --cwd.",
          "",
          "Exit codes: 0 final_answer, 3 max_turns, 4 max_tool_calls, 5 timeout, 6 permission_denied, 7 tool_error,",
          "            8 model_error, 10 suspended (--on-ask suspend), 130 user_abort, 2 usage error, 1 crash.",
          "",
          "Examples:",
          '  OPENAI_BASE_URL=http://localhost:11434/v1 STATECRAFT_MODEL=qwen2.5:7b statecraft run "fix the failing test"',
          '  statecraft run --model script:case.json "same request as recorded"',
          '  { echo "Review this diff:"; git diff; } | statecraft run --json --permission-mode plan > events.ndjson',
        ].join("\n"),
      )
      .action(async (promptArgs: string[], flags: RunCommandFlags, cmd: Command) => {
        const { runAction } = await import("./run-action.js");
        context.exitCode = await runAction(promptArgs, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
