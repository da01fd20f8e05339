import { randomUUID } from "node:crypto";
import type { AgentEvent, CompletedRunResult } from "../events.js";
import type { PermissionRequest } from "../permissions/types.js";
import type { QueryOptions } from "../options.js";
import { query, type QueryRun } from "../query.js";

/** Where a run stands for the tool call waiting on it: ended, or asking a question. */
export type RunStop = { kind: "end"; result: CompletedRunResult } | { kind: "ask"; request: PermissionRequest };

/** What a tool call waiting on the run hears as it goes. */
export interface RunListener {
  onState(state: string, turn: number): void;
}

interface PendingAsk {
  request: PermissionRequest;
  resolve(answer: "allow" | "deny"): void;
}

/**
 * One agent run behind a `run_agent` call. It goes on by itself; a call (or each round of one, when a question went
 * to the host and its answer came back as a new request) waits for its next stop: the end, or a permission question.
 * Questions are handed out one at a time, in the order asked.
 */
export class AgentRun {
  readonly key = randomUUID();
  private readonly controller = new AbortController();
  private readonly run: QueryRun;
  private readonly asks: PendingAsk[] = [];
  private result: CompletedRunResult | undefined;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private listener: RunListener | undefined;

  constructor(prompt: string, options: QueryOptions, askHost: boolean, onEnd: () => void) {
    // A question nobody answers is denied: a run served over MCP never suspends.
    const permissions = { ...(options.permissions ?? {}), whenUnanswered: "deny" as const, ...(askHost ? { onAsk: (request: PermissionRequest) => this.ask(request) } : {}) };
    this.run = query(prompt, { ...options, permissions, signal: this.controller.signal });
    void this.pump().finally(onEnd);
  }

  get sessionId(): string {
    return this.run.sessionId;
  }

  /** Waits for the run's next stop; the listener hears its states meanwhile. */
  async nextStop(listener: RunListener): Promise<RunStop> {
    this.listener = listener;
    try {
      for (;;) {
        if (this.failure !== undefined) throw this.failure;
        if (this.result) return { kind: "end", result: this.result };
        const ask = this.asks[0];
        if (ask) return { kind: "ask", request: ask.request };
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      if (this.listener === listener) this.listener = undefined;
    }
  }

  /** Answers the question `nextStop` handed out last. */
  answer(answer: "allow" | "deny"): void {
    this.asks.shift()?.resolve(answer);
  }

  /** Ends the run `user_abort` (a cancelled call, a question left unanswered). */
  abort(): void {
    this.controller.abort();
  }

  private ask(request: PermissionRequest): Promise<"allow" | "deny"> {
    return new Promise((resolve) => {
      const pending: PendingAsk = { request, resolve };
      this.asks.push(pending);
      // A question that no longer needs an answer (the run ended) leaves the queue.
      request.signal?.addEventListener("abort", () => {
        const at = this.asks.indexOf(pending);
        if (at >= 0) this.asks.splice(at, 1);
      });
      this.notify();
    });
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const next = await this.run.next();
        if (next.done) {
          // A suspended run is impossible here (no whenUnanswered "suspend"); it is reported as a failure if it comes.
          if (next.value.status !== "completed") throw new Error(`the run suspended (session ${next.value.sessionId}); runs served over MCP do not suspend`);
          this.result = next.value;
          return;
        }
        this.onEvent(next.value);
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.notify();
    }
  }

  private onEvent(event: AgentEvent): void {
    if (event.type === "state") this.listener?.onState(event.state, event.turn);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
