import { AgentError } from "../errors/agent-error.js";
import type { Logger } from "../logger.js";
import type { RunStore, StoredRun } from "./run-store.js";

/**
 * Takes the run's lock in its store, so a resume() of it while it runs is refused. A lock that can't be taken
 * leaves the run going, unchecked: logged, since the run can't be resumed if its process dies.
 */
export async function lockRun(store: RunStore, sessionId: string, logger: Logger): Promise<(() => Promise<void>) | undefined> {
  try {
    return await store.lock!(sessionId);
  } catch (error) {
    const busy = (error as AgentError).code === "RUN_BUSY";
    logger[busy ? "warn" : "error"]({ sessionId, err: (error as Error).message }, "statecraft: the run is not checkpointed (it can't be resumed if its process dies)");
    return undefined;
  }
}

/**
 * A new run of a session whose run is suspended would overwrite what resume() needs: the suspended run comes first.
 * A stored run that can't be read is replaced by the new run's (said in the log: it could not be resumed anyway).
 */
export async function refuseOverSuspended(store: RunStore, sessionId: string, logger: Logger): Promise<void> {
  let stored: StoredRun | undefined;
  try {
    stored = await store.load(sessionId);
  } catch (error) {
    logger.warn({ sessionId, err: (error as Error).message }, "statecraft: the session's stored run can't be resumed; the new run replaces it");
    return;
  }
  if (stored?.status === "running") {
    logger.warn({ sessionId, runId: stored.runId }, "statecraft: the session's interrupted run is given up (resume(sessionId) would have continued it); the new run replaces it");
    return;
  }
  if (stored?.status !== "suspended") return;
  throw new AgentError(
    "SESSION_BUSY",
    `session ${sessionId} has a suspended run waiting on ${stored.pending.map((c) => c.callId).join(", ")}; resume it (resume(sessionId, { answers }), or statecraft resume ${sessionId}), or delete .agent/runs/${sessionId}.json to give it up`,
  );
}
