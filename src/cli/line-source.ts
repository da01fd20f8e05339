import { createInterface, type Interface } from "node:readline";
import type { CliIO } from "./io.js";

/** Where `chat` gets the person's next message. `null` means they want to leave (Ctrl-C, Ctrl-D, end of input). */
export interface LineSource {
  next(prompt: string): Promise<string | null>;
  close(): void;
}

/**
 * On a terminal: a line editor (history, arrows) that exists only while waiting for a line, so during a run the
 * terminal is back to normal (Ctrl-C is a signal that aborts the run, a permission question can read single keys).
 * Ctrl-C or Ctrl-D at the prompt leaves.
 */
export function terminalLineSource(io: CliIO): LineSource {
  let history: string[] = [];
  let active: Interface | undefined;
  return {
    next(prompt) {
      return new Promise((resolve) => {
        const rl = createInterface({ input: io.stdin, output: io.stdout, terminal: true, history: [...history], historySize: 200, removeHistoryDuplicates: true });
        active = rl;
        let settled = false;
        const settle = (value: string | null) => {
          if (settled) return;
          settled = true;
          active = undefined;
          rl.close();
          resolve(value);
        };
        rl.on("history", (lines: string[]) => (history = [...lines]));
        rl.on("SIGINT", () => {
          io.stdout.write("\n");
          settle(null);
        });
        rl.on("close", () => settle(null));
        rl.question(prompt, (answer) => settle(answer));
      });
    },
    close() {
      active?.close();
    },
  };
}

/** Not a terminal: every line of stdin is a message, in order, until the input ends. */
export function streamLineSource(io: CliIO): LineSource {
  const rl = createInterface({ input: io.stdin, terminal: false, crlfDelay: Infinity });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async next() {
      const next = await lines.next();
      return next.done ? null : next.value;
    },
    close() {
      rl.close();
    },
  };
}
