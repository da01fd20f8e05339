import type { PermissionAnswer } from "../permissions/types.js";
import type { RunOptions } from "./run-options.js";
import type { TraceContext } from "../record/run-record.js";

/** DBOS names every worker and client of a database agree on. */
export const APP_NAME = "statecraft";
export const APP_VERSION = "statecraft-run-1";
export const QUEUE = "statecraft_runs";
export const WORKFLOW = "statecraft.run";

/** What a queued run's workflow is started with (its input, recorded by DBOS). */
export interface RunSpec {
  sessionId: string;
  runId: string;
  /** 0: the run from its start; n > 0: its n-th resumption, with the answers to its pending calls. */
  part: number;
  input: string;
  options: RunOptions;
  answers?: Record<string, PermissionAnswer>;
  answeredBy?: string;
  /**
   * A resumption: the digest of the pending calls `answer()` found in `statecraft.runs` (what `statecraft runs` and
   * `listRuns` showed whoever answered). The stored run must wait on those very calls.
   */
  seen?: string;
  /** The workers' queue, when not the default. */
  queue?: string;
  /** The W3C trace context of the client that queued (or answered) it: the worker's spans join its trace. */
  traceContext?: TraceContext;
}

/**
 * A run's workflow ids: the run id for its start, `<runId>:<part>` for each resumption and `<runId>:after:<other>`
 * when it starts after waiting for the session's earlier run; one id per piece, so each is started exactly once.
 */
export function workflowIdOf(spec: { runId: string; part: number }, after?: string): string {
  if (after !== undefined) return `${spec.runId}:after:${after}`;
  return spec.part === 0 ? spec.runId : `${spec.runId}:${spec.part}`;
}

/** Where a run stands, in `statecraft.runs`. */
export type RunStatus = "queued" | "running" | "suspended" | "resuming" | "waiting" | "finished";
