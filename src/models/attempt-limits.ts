import { AgentError } from "../errors/agent-error.js";

/** What bounds one attempt: its time limit, and how long the server may send nothing. */
export interface AttemptLimitSettings {
  timeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * The abort wiring of one HTTP attempt: the caller's signal, the idle timer (no bytes for `idleTimeoutMs`) and the
 * attempt's time limit (`timeoutMs`) all abort `controller`, whose signal goes to the request; `limitError()` then
 * tells whether a limit was the cause.
 */
export class AttemptLimits {
  readonly controller = new AbortController();
  private idleFired = false;
  private timeoutFired = false;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private deadline: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort = () => this.controller.abort(this.signal.reason);

  constructor(
    private readonly signal: AbortSignal,
    private readonly settings: AttemptLimitSettings,
  ) {}

  /** Follows the caller's signal and starts the time limit and the idle timer: called as the request starts. */
  start(): void {
    this.signal.addEventListener("abort", this.onAbort, { once: true });
    if (this.signal.aborted) this.controller.abort(this.signal.reason);
    this.deadline = setTimeout(() => {
      this.timeoutFired = true;
      this.controller.abort();
    }, this.settings.timeoutMs);
    this.touch();
  }

  /** Restarts the idle timer: bytes arrived. */
  touch(): void {
    clearTimeout(this.idleTimer);
    if (this.controller.signal.aborted) return;
    this.idleTimer = setTimeout(() => {
      this.idleFired = true;
      this.controller.abort();
    }, this.settings.idleTimeoutMs);
  }

  /** Stops the timers and the following; closes the connection when the caller stopped reading early (a no-op after a complete stream). */
  stop(): void {
    clearTimeout(this.deadline);
    clearTimeout(this.idleTimer);
    this.signal.removeEventListener("abort", this.onAbort);
    this.controller.abort();
  }

  /**
   * The failure as the limit that caused it, or undefined when no limit fired: asked before any other reading, since
   * their aborts look like any other.
   */
  limitError(baseUrl: string, thrown: unknown): AgentError | undefined {
    if (this.idleFired) {
      return new AgentError("MODEL_ERROR", `${baseUrl} sent nothing for ${this.settings.idleTimeoutMs} ms (idleTimeoutMs); the stream stalled`, {
        retryable: true,
        cause: thrown,
      });
    }
    if (this.timeoutFired) {
      return new AgentError("MODEL_ERROR", `the request to ${baseUrl} did not finish within ${this.settings.timeoutMs} ms (timeoutMs)`, {
        retryable: true,
        cause: thrown,
      });
    }
    return undefined;
  }
}
