export { turnsExhausted } from "./turns-exhausted.js";
export { toolCallsExhausted } from "./tool-calls-exhausted.js";
export { timedOut } from "./timed-out.js";
export { aborted } from "./aborted.js";
export {
  modelRequestedTools,
  batchHasErrors,
  batchAwaitsPermission,
  fatalToolError,
  runFailed,
  permissionDenied,
  batchHitToolLimit,
  callsAllowed,
  permissionSuspended,
} from "./batch.js";
export {
  steeringQueued,
  followUpQueued,
  tokensExhausted,
  contextOverBudget,
  needsPreparation,
  overflowRecoverable,
  modelErrorHookApplies,
  awaitsRecoveryDecision,
  preparesContext,
  resuming,
  resumesAt,
} from "./loop.js";
export { outputRequested, outputValid, outputRetriesSpent } from "./output.js";
