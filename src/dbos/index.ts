// statecraft/dbos: agent runs as durable DBOS workflows on PostgreSQL, many workers, approvals from anywhere
// (docs/scale-out.md). Its own entry: the main entry never loads DBOS.
export { createWorker, defaultWorkerId, type Worker, type WorkerOptions } from "./worker.js";
export { enqueueRun, answer, type EnqueueOptions, type AnswerOptions } from "./enqueue.js";
export { watch, type WatchOptions } from "./watch.js";
export { abortRun, type AbortRunOptions, type AbortedRun } from "./abort.js";
export { recoverRuns } from "./recover.js";
export { closeClients } from "./clients.js";
export { listRuns, readLines, loadSessionFromDatabase, type ListedRun } from "./read.js";
export type { LineStream } from "./pg-lines.js";
export type { RunOptions } from "./run-options.js";
export type { RecordedSettings, PermissionSettings } from "../record/settings-record.js";
export { turnScript, turnScriptFile } from "./turn-script.js";
export type { RunStatus } from "./names.js";
