import type { CliIO } from "../io.js";
import { canAsk } from "../io.js";
import type { OutputSetup } from "../context.js";
import { HumanRenderer, JsonRenderer } from "../render.js";
import type { ExecuteRunOptions } from "../run-agent.js";
import { openControllingTerminal } from "../terminal-input.js";

/** What `run` and `resume` show a run with, and ask its questions on. */
export interface RunSurface {
  /** executeRun's options for the output: the renderer (--json or human), styles, logger, the terminal to ask on. */
  options: Pick<ExecuteRunOptions, "io" | "renderer" | "json" | "errStyle" | "promptStyle" | "logger" | "askInput">;
  /** Gives the terminal back (call when the run has ended). */
  close(): void;
}

/**
 * The renderer for `--json` or for humans (a spinner and thinking only on a terminal), and, when stdin is not a
 * terminal (a piped prompt), the controlling terminal to ask permission questions on, if questions have one to go to.
 */
export function runSurface(io: CliIO, output: OutputSetup, json: boolean): RunSurface {
  const onTerminal = io.stdout.isTTY === true;
  const renderer = json ? new JsonRenderer(io.stdout) : new HumanRenderer(io.stdout, { style: output.out, spinner: onTerminal, thinking: onTerminal });
  const questionsOn = json ? io.stderr : io.stdout;
  const terminal = !canAsk(io) && questionsOn.isTTY === true ? openControllingTerminal() : undefined;
  return {
    options: {
      io,
      renderer,
      json,
      errStyle: output.err,
      promptStyle: json ? output.err : output.out,
      logger: output.logger,
      ...(terminal ? { askInput: terminal } : {}),
    },
    close: () => terminal?.destroy(),
  };
}
