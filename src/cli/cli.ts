import { CommanderError } from "commander";
import { EXIT_CODES } from "./exit-codes.js";
import { processIO, type CliIO } from "./io.js";
import { createProgram } from "./program.js";
import { UsageError } from "./usage-error.js";
import type { CliContext } from "./context.js";

/** Waits until what was written to a stream has been handed to the OS, so exiting loses nothing. */
export function drained(stream: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean }): Promise<void> {
  if (!stream.writableLength || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once("drain", () => resolve());
    stream.once("close", () => resolve());
  });
}

/** Runs the command line and returns the exit code; never throws. */
export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const context: CliContext = { io, exitCode: 0 };
  try {
    const program = await createProgram(context, argv);
    await program.parseAsync([...argv], { from: "user" });
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with 0; everything else commander reports (unknown flag, bad value) is a usage error.
      return error.exitCode === 0 ? 0 : EXIT_CODES.usage;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message.startsWith("statecraft:") ? error.message : `statecraft: ${error.message}`}\n`);
      return EXIT_CODES.usage;
    }
    io.stderr.write(`statecraft crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    io.stderr.write("This is a bug in statecraft; please report it with the command you ran.\n");
    return EXIT_CODES.crash;
  }
}

