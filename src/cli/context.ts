import type { Command } from "commander";
import { colorsEnabled, createStyle, type Style } from "./colors.js";
import type { CliIO } from "./io.js";
import { createLogger, resolveLogLevel, type Logger } from "./logger.js";

/** What every command gets: where to read and write, and where to leave its exit code. */
export interface CliContext {
  io: CliIO;
  /** The exit code the command's action decided (0 until then). */
  exitCode: number;
}

/** A subcommand of `statecraft`: adds itself (its flags, help and action) to the program. */
export interface CliCommand {
  name: string;
  /**
   * Adds the command to the program. `named` says whether the command line mentions the command at all: a command
   * whose definition pulls in heavy modules can add a light stand-in (name and description, for `--help`) otherwise,
   * so every other command starts fast.
   */
  register(program: Command, context: CliContext, named: boolean): void | Promise<void>;
}

/** Output settings of one invocation, from the global flags and the environment. */
export interface OutputSetup {
  out: Style;
  err: Style;
  logger: Logger;
}

/**
 * Colours for stdout and stderr (each on only for a terminal, off with NO_COLOR or --no-color) and the logger (level
 * from --log-level or STATECRAFT_LOG_LEVEL, then JSON lines; else warnings and errors only, as text), which runs pass
 * on to the engine.
 */
export function setupOutput(io: CliIO, flags: { logLevel?: string; color?: boolean }): OutputSetup {
  const level = resolveLogLevel(flags.logLevel, io.env);
  const noColor = flags.color === false;
  return {
    out: createStyle(colorsEnabled(io.stdout, io.env, noColor)),
    err: createStyle(colorsEnabled(io.stderr, io.env, noColor)),
    // Logs asked for (a level given) are JSON lines; at the default level only problems reach stderr, as sentences.
    logger: createLogger(level, 2, flags.logLevel !== undefined || (io.env.STATECRAFT_LOG_LEVEL ?? "") !== "" ? "json" : "text"),
  };
}
