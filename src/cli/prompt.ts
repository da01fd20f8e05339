import { AnsweredOnPage } from "../inspect/ask-through-inspector.js";
import type { PermissionAnswer, PermissionRequest } from "../permissions/types.js";
import type { Style } from "./colors.js";
import { oneLine, toolSubject } from "./format.js";
import type { InputStream, OutputStream } from "./io.js";
import { sanitize } from "./render.js";

const MAX_SHOWN_LINES = 40;

function record(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

function capped(lines: string[], prefix: string, paint: (text: string) => string, style: Style): string[] {
  const shown = lines.slice(0, MAX_SHOWN_LINES).map((line) => paint(`${prefix}${sanitize(line)}`));
  if (lines.length > MAX_SHOWN_LINES) shown.push(style.dim(`      … ${lines.length - MAX_SHOWN_LINES} more lines`));
  return shown;
}

/**
 * What a permission request will do, exactly, as lines for a person to read before answering: the full command of
 * `bash`, the lines an `edit_file` removes and adds, what a `write_file` writes, the input of any other tool.
 */
export function describeRequest(request: PermissionRequest, style: Style): string[] {
  const { name, input } = request.call;
  const fields = record(input);
  const lines = [
    `${style.yellow("?")} ${style.bold(name)} ${oneLine(sanitize(toolSubject(name, input)), 80)} ${style.dim(`— ${request.reason}`)}`,
  ];
  if (name === "bash" && typeof fields.command === "string") {
    lines.push(...capped(fields.command.split("\n"), "    $ ", (t) => t, style));
    if (typeof fields.timeoutMs === "number") lines.push(style.dim(`    (time limit ${fields.timeoutMs} ms)`));
  } else if (name === "edit_file" && typeof fields.old_string === "string" && typeof fields.new_string === "string") {
    lines.push(`    edit ${sanitize(String(fields.path ?? ""))}${fields.replace_all === true ? style.dim(" (every occurrence)") : ""}`);
    lines.push(...capped(fields.old_string.split("\n"), "    - ", style.red, style));
    lines.push(...capped(fields.new_string.split("\n"), "    + ", style.green, style));
  } else if (name === "write_file" && typeof fields.content === "string") {
    const content = fields.content.split("\n");
    lines.push(`    write ${sanitize(String(fields.path ?? ""))} (${content.length} lines)`);
    lines.push(...capped(content, "    + ", style.green, style));
  } else {
    const json = JSON.stringify(input, null, 2) ?? String(input);
    lines.push(...capped(json.split("\n"), "    ", (t) => t, style));
  }
  return lines;
}

export const ANSWER_WORDS: Record<PermissionAnswer, string> = {
  allow: "allowed once",
  allow_always: "allowed for the rest of this session",
  deny: "denied",
};

/** The question under the request. */
export function questionLine(style: Style): string {
  return `  ${style.bold("Allow?")} ${style.cyan("[y/a/n]")} ${style.dim("y: yes, once · a: always (this session) · n: no ›")} `;
}

/** Maps one key press to an answer: `y`, `a`, `n` (Enter and Escape mean no). Other keys are not an answer. */
export function answerForKey(key: string): PermissionAnswer | "interrupt" | undefined {
  switch (key) {
    case "y":
    case "Y":
      return "allow";
    case "a":
    case "A":
      return "allow_always";
    case "n":
    case "N":
    case "\r":
    case "\n":
    case "\u001b":
    case "\u0004":
      return "deny";
    case "\u0003":
      return "interrupt";
    default:
      return undefined;
  }
}

export interface TerminalPrompterOptions {
  input: InputStream;
  output: OutputStream;
  style: Style;
  /** Called before the question is written (stops the spinner, ends the current line). */
  beforeAsk?: () => void;
  /** Ctrl-C while the question waits: the terminal is in raw mode, so no SIGINT arrives; the run must be aborted. */
  onInterrupt: () => void;
}

/** Answers `permissions.onAsk` by asking the person at the terminal, one key: y / a / n. */
export interface PermissionPrompter {
  ask(request: PermissionRequest): Promise<PermissionAnswer>;
  /** Ends a question still waiting (the run stopped meanwhile): it is answered deny and the terminal restored. */
  cancel(): void;
}

export function createTerminalPrompter(options: TerminalPrompterOptions): PermissionPrompter {
  const { input, output, style } = options;
  let queue: Promise<unknown> = Promise.resolve();
  let pending: { finish: (answer: PermissionAnswer) => void } | undefined;
  let cancelled = false;

  const askOne = (request: PermissionRequest): Promise<PermissionAnswer> =>
    new Promise<PermissionAnswer>((resolve) => {
      if (cancelled) {
        resolve("deny");
        return;
      }
      const onData = (chunk: Buffer | string) => {
        const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
        for (const key of text) {
          const answer = answerForKey(key);
          if (answer === undefined) continue;
          if (answer === "interrupt") {
            output.write(style.yellow("interrupted\n"));
            finish("deny", false);
            options.onInterrupt();
            return;
          }
          finish(answer, true);
          return;
        }
      };
      const finish = (answer: PermissionAnswer, say: boolean) => {
        input.off("data", onData);
        input.setRawMode?.(false);
        input.pause();
        pending = undefined;
        if (say) {
          const word = ANSWER_WORDS[answer];
          output.write(`${answer === "deny" ? style.red(word) : style.green(word)}\n`);
        }
        resolve(answer);
      };
      pending = {
        finish: (answer) => {
          output.write(style.dim("(run ended)\n"));
          finish(answer, false);
        },
      };
      // Answered elsewhere (the inspector's page): the question is withdrawn, saying who answered and how.
      request.signal?.addEventListener(
        "abort",
        () => {
          if (pending === undefined) return;
          const reason: unknown = request.signal?.reason;
          output.write(style.dim(`(${reason instanceof AnsweredOnPage ? reason.message : "answered elsewhere"})\n`));
          finish("deny", false);
        },
        { once: true },
      );
      // Raw mode before the question shows, so a key pressed as soon as it appears is read, not echoed.
      input.setRawMode?.(true);
      input.on("data", onData);
      input.resume();
      options.beforeAsk?.();
      output.write(`${describeRequest(request, style).join("\n")}\n${questionLine(style)}`);
    });

  return {
    ask(request) {
      // One question at a time, in the order the engine asks.
      const next = queue.then(() => askOne(request));
      queue = next.catch(() => undefined);
      return next;
    },
    cancel() {
      cancelled = true;
      pending?.finish("deny");
    },
  };
}
