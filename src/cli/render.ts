import type { AgentEvent } from "../events.js";
import type { StopReason } from "../machine/stop-reasons.js";
import type { ToolCall, ToolResult } from "../models/messages.js";
import type { Style } from "./colors.js";
import { formatDuration, formatUsage, oneLine, plural, toolOutcome, toolSubject } from "./format.js";
import type { OutputStream } from "./io.js";
import { Spinner } from "./spinner.js";

/** Turns a run's events into output. One renderer per run. */
export interface Renderer {
  event(event: AgentEvent): void;
  /** Writes a line of the command's own (a notice, the demo's commentary), on a line of its own. */
  line(text: string): void;
  /** Before something else writes to the terminal (a question): stops the spinner and ends a half-written line. */
  pause(): void;
  /** After the run: stops the spinner and ends the last line. */
  close(): void;
}

/** `--json`: exactly one `AgentEvent` per line, nothing else. */
export class JsonRenderer implements Renderer {
  constructor(private readonly stdout: OutputStream) {}
  event(event: AgentEvent): void {
    this.stdout.write(`${JSON.stringify(event)}\n`);
  }
  line(): void {
    // Nothing but events goes to stdout in JSON mode; callers send notices to stderr themselves.
  }
  pause(): void {}
  close(): void {}
}

export interface HumanRendererOptions {
  style: Style;
  /** Show a spinner while waiting for the model or a tool (only sensible on a terminal). */
  spinner: boolean;
  /** Show the model's reasoning text (dimmed) as it streams. */
  thinking: boolean;
  now?: () => number;
}

const REASON_WORDS: Record<StopReason, string> = {
  final_answer: "done",
  max_turns: "stopped: turn limit",
  max_tool_calls: "stopped: tool call limit",
  timeout: "stopped: time limit",
  user_abort: "aborted",
  permission_denied: "stopped: permission denied",
  tool_error: "stopped: tool error",
  model_error: "stopped: model error",
};

/**
 * Terminal output a person reads: the answer streamed as it arrives, one compact line per tool call, a spinner while
 * waiting, and a closing line saying why the run stopped and what it cost.
 */
export class HumanRenderer implements Renderer {
  private readonly spinner: Spinner | undefined;
  private readonly style: Style;
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly toolStarts = new Map<string, { call: ToolCall; at: number }>();
  private atLineStart = true;
  private streaming: "text" | "thinking" | undefined;

  constructor(
    private readonly stdout: OutputStream,
    private readonly options: HumanRendererOptions,
  ) {
    this.style = options.style;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.spinner = options.spinner ? new Spinner(stdout, options.style, this.now) : undefined;
  }

  event(event: AgentEvent): void {
    switch (event.type) {
      case "state":
        if (event.state === "call_model") this.spin("thinking");
        return;
      case "text_delta":
        this.stream("text", event.text);
        return;
      case "thinking_delta":
        if (this.options.thinking) this.stream("thinking", event.text);
        return;
      case "retry":
        this.line(
          this.style.yellow(
            `  ↻ model request failed (${oneLine(event.error.message, 80)}); retry ${event.attempt} in ${formatDuration(event.delayMs)}`,
          ),
        );
        this.spin("waiting to retry");
        return;
      case "tool_start":
        this.toolStarts.set(event.call.id, { call: event.call, at: this.now() });
        this.spinRunningTools();
        return;
      case "tool_result":
        this.toolResult(event.call, event.result);
        return;
      case "permission_request":
        // Shown by the question itself (prompt.ts) or by the demo's policy, which run before this event arrives.
        return;
      case "inspector":
        // Said on stderr by the run itself (run-agent.ts), so stdout stays the answer.
        return;
      case "turn_end":
        this.pause();
        this.write(`\n${this.finalLine(event)}\n`);
        if (event.error && event.reason !== "final_answer") {
          this.write(`${this.style.red("  error:")} ${sanitize(event.error.message)}\n`);
        }
        return;
    }
  }

  line(text: string): void {
    this.pause();
    this.write(`${text}\n`);
  }

  pause(): void {
    this.spinner?.stop();
    if (!this.atLineStart) this.write("\n");
    this.streaming = undefined;
  }

  close(): void {
    this.pause();
  }

  private stream(kind: "text" | "thinking", text: string): void {
    this.spinner?.stop();
    const clean = sanitize(text);
    if (clean === "") return;
    if (this.streaming !== kind && !this.atLineStart) this.write("\n");
    this.streaming = kind;
    this.write(kind === "thinking" ? this.style.dim(clean) : clean);
  }

  private spin(label: string): void {
    if (!this.spinner) return;
    if (!this.atLineStart) this.write("\n");
    this.streaming = undefined;
    this.spinner.start(label);
  }

  private spinRunningTools(): void {
    if (!this.spinner || this.toolStarts.size === 0) return;
    const running = [...this.toolStarts.values()];
    const first = running[0].call;
    const label =
      running.length === 1 ? `${first.name} ${oneLine(sanitize(toolSubject(first.name, first.input)), 50)}` : `running ${running.length} tools`;
    this.spin(label);
  }

  private toolResult(call: ToolCall, result: ToolResult): void {
    const started = this.toolStarts.get(call.id);
    this.toolStarts.delete(call.id);
    this.pause();
    const s = this.style;
    const mark = result.isError ? s.red("✗") : s.green("✓");
    const outcome = toolOutcome(call.name, result);
    const duration = started ? formatDuration(this.now() - started.at) : "not run";
    const subject = oneLine(sanitize(toolSubject(call.name, call.input)), 60);
    const outcomeText = result.isError ? s.red(outcome) : s.dim(outcome);
    this.write(`  ${mark} ${s.bold(call.name)} ${subject} ${s.dim("·")} ${outcomeText} ${s.dim(`· ${duration}`)}\n`);
    this.spinRunningTools();
  }

  private finalLine(event: Extract<AgentEvent, { type: "turn_end" }>): string {
    const s = this.style;
    const colour = event.reason === "final_answer" ? s.green : event.reason === "user_abort" ? s.yellow : s.red;
    const parts = [
      colour(`■ ${event.reason}`) + s.dim(` (${REASON_WORDS[event.reason]})`),
      plural(event.turns, "turn"),
      plural(event.toolCalls, "tool call"),
      formatUsage(event.usage),
      formatDuration(this.now() - this.startedAt),
      `session ${event.sessionId}`,
    ];
    return parts.join(s.dim(" · "));
  }

  private write(text: string): void {
    if (text === "") return;
    this.stdout.write(text);
    this.atLineStart = text.endsWith("\n");
  }
}

/**
 * Model and tool text must not drive the terminal: control characters (escape sequences, carriage returns, bells) are
 * dropped; newlines and tabs stay.
 */
export function sanitize(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}
