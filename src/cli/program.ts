import { readFileSync } from "node:fs";
import { Command } from "commander";
import { COMMANDS } from "./commands/index.js";
import type { CliContext } from "./context.js";

/** The package's version, read from its package.json (two folders up from src/cli and from dist/cli alike). */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * The `statecraft` program: every command of the registry, `--help` everywhere, `--version`. Commander never exits
 * the process itself: its errors are thrown (see main.ts) so usage mistakes end with exit code 2.
 */
export async function createProgram(context: CliContext, argv: readonly string[] = []): Promise<Command> {
  const program = new Command("statecraft")
    .description("An agent engine whose loop is an explicit state machine: run an agent in a folder, chat with it, or see the demo.")
    .version(packageVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .option("--no-color", "no colours (also off with NO_COLOR or when output is not a terminal)")
    .configureOutput({
      writeOut: (text) => context.io.stdout.write(text),
      writeErr: (text) => context.io.stderr.write(text),
    })
    .showHelpAfterError("(add --help for usage)")
    .exitOverride();
  program.addHelpText(
    "after",
    [
      "",
      "Start here:  statecraft demo        (offline, no key)",
      '             statecraft run "…"     (needs a model: OPENAI_API_KEY, OPENAI_BASE_URL, STATECRAFT_MODEL or --model)',
    ].join("\n"),
  );
  for (const command of COMMANDS) await command.register(program, context, argv.includes(command.name));
  return program;
}
