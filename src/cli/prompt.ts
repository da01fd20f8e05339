import { AnsweredOnPage } from "../inspect/ask-through-inspector.js";
import type { PermissionAnswer, PermissionRequest } from "../permissions/types.js";
import type { Style } from "./colors.js";
import { oneLine, toolSubject } from "./format.js";
import type { InputStream, OutputStream } from "./io.js";
import { sanitize } from "./render.js";

/** Lines of a field shown before the rest is left out, when a call is too long to show whole. */
const MAX_SHOWN_LINES = 40;
/** A call is shown whole up to this many lines in all (and characters): past it, it can only be denied here. */
export const MAX_WHOLE_LINES = 400;
export const MAX_WHOLE_CHARS = 40_000;

function record(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/**
 * Text as it would run, made safe to print without hiding anything: control characters (but tab) and Unicode format
 * characters (bidirectional overrides, zero-width spaces…) are written as `⟨U+202E⟩`, never dropped, so a
 * carriage return or an escape sequence can't hide what comes before it.
 */
export function visible(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]|\p{Cf}/gu, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/** A request as shown: its lines, and whether they show all of the call (only then may it be allowed here). */
export interface RequestView {
  lines: string[];
  whole: boolean;
}

function shownLines(lines: string[], prefix: string, paint: (text: string) => string, style: Style, whole: boolean): string[] {
  const limit = whole ? lines.length : MAX_SHOWN_LINES;
  const shown = lines.slice(0, limit).map((line) => paint(`${prefix}${visible(line)}`));
  if (lines.length > limit) shown.push(style.dim(`      … ${lines.length - limit} more lines not shown`));
  return shown;
}

/**
 * What a permission request will do, exactly, as lines for a person to read before answering: the full command of
 * `bash`, the lines an `edit_file` removes and adds, what a `write_file` writes, the input of any other tool.
 */
export function describeRequest(request: PermissionRequest, style: Style): string[] {
  return viewRequest(request, style).lines;
}

/**
 * `describeRequest`, saying whether the lines show the call whole. A call past `MAX_WHOLE_LINES` lines or
 * `MAX_WHOLE_CHARS` characters is shown in part, and the question says it can only be denied here.
 */
export function viewRequest(request: PermissionRequest, style: Style): RequestView {
  const texts = shownTexts(request);
  const size = texts.reduce((sum, text) => ({ lines: sum.lines + text.split("\n").length, chars: sum.chars + text.length }), { lines: 0, chars: 0 });
  const whole = size.lines <= MAX_WHOLE_LINES && size.chars <= MAX_WHOLE_CHARS;
  const lines = requestLines(request, style, whole);
  if (!whole) {
    lines.push(
      style.red(
        `    too long to show whole here (${size.lines} lines, ${size.chars} characters; at most ${MAX_WHOLE_LINES} lines and ${MAX_WHOLE_CHARS} ` +
          "characters are shown whole), so it can't be allowed here: n denies it; allow it with a rule after reading it elsewhere",
      ),
    );
  }
  return { lines, whole };
}

/** The texts of a call the question shows in full. */
function shownTexts(request: PermissionRequest): string[] {
  const { name, input } = request.call;
  const fields = record(input);
  if (name === "bash" && typeof fields.command === "string") return [fields.command];
  if (name === "edit_file" && typeof fields.old_string === "string" && typeof fields.new_string === "string") return [fields.old_string, fields.new_string];
  if (name === "write_file" && typeof fields.content === "string") return [fields.content];
  return [JSON.stringify(input, null, 2) ?? String(input)];
}

function requestLines(request: PermissionRequest, style: Style, whole: boolean): string[] {
  const { name, input } = request.call;
  const fields = record(input);
  const capped = (lines: string[], prefix: string, paint: (text: string) => string, s: Style) => shownLines(lines, prefix, paint, s, whole);
  const lines = [
    `${style.yellow("?")} ${style.bold(name)} ${oneLine(sanitize(toolSubject(name, input)), 80)} ${style.dim(`— ${request.reason}`)}`,
  ];
  if (name === "bash" && typeof fields.command === "string") {
    lines.push(...capped(fields.command.split("\n"), "    $ ", (t) => t, style));
    if (typeof fields.timeoutMs === "number") lines.push(style.dim(`    (time limit ${fields.timeoutMs} ms)`));
  } else if (name === "edit_file" && typeof fields.old_string === "string" && typeof fields.new_string === "string") {
    lines.push(`    edit ${visible(String(fields.path ?? ""))}${fields.replace_all === true ? style.dim(" (every occurrence)") : ""}`);
    lines.push(...capped(fields.old_string.split("\n"), "    - ", style.red, style));
    lines.push(...capped(fields.new_string.split("\n"), "    + ", style.green, style));
  } else if (name === "write_file" && typeof fields.content === "string") {
    const content = fields.content.split("\n");
    lines.push(`    write ${visible(String(fields.path ?? ""))} (${content.length} lines)`);
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

/** The question under the request; for a call not shown whole, only n is offered. */
export function questionLine(style: Style, whole = true): string {
  if (!whole) return `  ${style.bold("Deny?")} ${style.cyan("[n]")} ${style.dim("n: no (y and a are off: the call is not shown whole) ›")} `;
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
      const view = viewRequest(request, style);
      let warned = false;
      const onData = (chunk: Buffer | string) => {
        const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
        for (const key of text) {
          const answer = answerForKey(key);
          if (answer === undefined) continue;
          // What is not shown whole is not allowed from here: y and a are not answers then.
          if (!view.whole && (answer === "allow" || answer === "allow_always")) {
            if (!warned) output.write(style.yellow("(not shown whole: it can't be allowed here; n denies) "));
            warned = true;
            continue;
          }
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
      output.write(`${view.lines.join("\n")}\n${questionLine(style, view.whole)}`);
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
