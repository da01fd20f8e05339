import { AgentError, type ErrorInfo } from "../errors/agent-error.js";
import type { AgentEvent } from "../events.js";
import type { RunLog } from "./run-log.js";

/**
 * Copies a run's events into its log as they come. Resolves once the first event is in (the run has started), or
 * rejects with what made the run refuse to start (a busy session, a bad answer); a failure after that is the log's.
 */
export function pump(events: AsyncIterable<AgentEvent>, log: RunLog, onEnd?: () => void): Promise<void> {
  return new Promise<void>((started, refused) => {
    let first = true;
    void (async () => {
      try {
        for await (const event of events) {
          log.push(event);
          if (first) {
            first = false;
            started();
          }
        }
        if (first) started();
      } catch (error) {
        if (first) refused(error);
        else log.fail(errorInfoOf(error));
      } finally {
        onEnd?.();
      }
    })();
  });
}

export function errorInfoOf(error: unknown): ErrorInfo {
  if (error instanceof AgentError) return error.toJSON();
  return { code: "INTERNAL", message: (error as Error)?.message ?? String(error) } as ErrorInfo;
}
