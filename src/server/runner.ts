import type { Message } from "../models/messages.js";
import type { PermissionAnswer } from "../permissions/types.js";
import type { RunLog } from "./run-log.js";
import type { StartRequest } from "./run-request.js";

/**
 * Where the server's runs run: in this process (the file or memory store) or on the DBOS queue. Each keeps a RunLog
 * per run it started or follows, which the routes read.
 */
export interface Runner {
  /** Starts a run; resolves once it has started (its first event is in its log), rejects when it may not. */
  start(request: StartRequest): Promise<RunLog>;
  /** The run's log, or undefined when this server knows no such run. */
  find(runId: string): Promise<RunLog | undefined>;
  /** Answers a suspended run's pending calls; resolves once it goes on. */
  answer(log: RunLog, answers: Record<string, PermissionAnswer>, answeredBy: string): Promise<void>;
  /** Ends the run `user_abort`: a running one at once, a suspended one without asking again. */
  abort(log: RunLog): Promise<void>;
  /** The session's runs, oldest first. */
  runsOf(sessionId: string): Promise<RunLog[]>;
  /** The session's conversation, or undefined when there is no such session. */
  messages(sessionId: string): Promise<Message[] | undefined>;
  close(): Promise<void>;
}
