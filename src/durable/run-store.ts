import { createHmac, timingSafeEqual } from "../util/node-crypto.js";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { StoredRun } from "../record/run-record.js";
import { isPermissionMode } from "../permissions/modes.js";

/** The stored form of a run's record format. */
export const RUN_RECORD_VERSION = 1;

// The stored form itself is declared with the other record formats (src/record/), so that the options a run is
// started with can name a RunStore without reaching up into this layer.
export type { StoredCall, StoredSettings, StoredAt, StoredRun, SaveHint, RunStore } from "../record/run-record.js";

const SIGNATURE_PREFIX = "hmac-sha256:";

/** A workspace as runs are bound to it: its real path. */
export function workspaceOf(cwd: string): string {
  try {
    return realpathSync.native(resolve(cwd));
  } catch {
    return resolve(cwd);
  }
}

function mac(key: Buffer, run: StoredRun): Buffer {
  return createHmac("sha256", key).update(JSON.stringify(["statecraft run 1", workspaceOf(run.cwd), run.sessionId, run])).digest();
}

/**
 * The stored run's signature. It covers everything resume() trusts (permission settings, the batch's decisions, the
 * conversation): the agent can write `.agent/` through a tool asked about, but has no key to sign what it wrote.
 */
/**
 * Why a stored run (its signature checked) is not this place's to resume, or undefined: a run is bound to the session
 * whose name it is kept under and to the real path of the workspace it ran in, so a signed file copied into another
 * workspace, or renamed to another session's name (where its approved call would run a second time), is refused.
 */
export function bindingProblem(run: StoredRun, place: { sessionId: string; workspace: string }): string | undefined {
  if (run.sessionId !== place.sessionId) {
    return `it is the run of session ${run.sessionId}, kept under the name of session ${place.sessionId} (copied or renamed)`;
  }
  const own = workspaceOf(run.cwd);
  const here = workspaceOf(place.workspace);
  if (own !== here) return `it is the run of workspace ${own}, found in workspace ${here} (copied)`;
  return undefined;
}

export function signRun(key: Buffer, run: StoredRun): string {
  return SIGNATURE_PREFIX + mac(key, run).toString("hex");
}

export function verifyRun(key: Buffer, run: StoredRun, sig: unknown): boolean {
  if (typeof sig !== "string" || !sig.startsWith(SIGNATURE_PREFIX)) return false;
  const given = Buffer.from(sig.slice(SIGNATURE_PREFIX.length), "hex");
  const expected = mac(key, run);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
/** An http(s) URL, as a recorded `baseUrl` must be. */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
const AT = new Set(["ask_permission", "call_model", "execute_tool"]);
const STATUSES = new Set(["pending", "invalid", "over_limit", "allowed", "denied", "finished"]);

/**
 * Checks a stored run's shape (its content is untrusted input: a torn or edited file); returns what is wrong, or
 * undefined. The signature is checked separately.
 */
export function runRecordProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "it is not a JSON object";
  if (value.v !== RUN_RECORD_VERSION) return `its version is ${JSON.stringify(value.v)}, this statecraft reads version ${RUN_RECORD_VERSION}`;
  for (const key of ["sessionId", "runId", "since", "cwd"]) if (typeof value[key] !== "string") return `"${key}" is not a string`;
  if (value.status !== "suspended" && value.status !== "running") return `"status" is ${JSON.stringify(value.status)}, not "suspended" or "running"`;
  if (!AT.has(value.at as string)) return `"at" is ${JSON.stringify(value.at)}, not one of ${[...AT].join(", ")}`;
  for (const key of ["activeMs", "traceSeq", "turn", "toolCallCount"]) {
    const n = value[key];
    if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return `"${key}" is not a number ≥ 0`;
  }
  const settings = value.settings;
  if (!isObject(settings)) return `"settings" is not an object`;
  if (typeof settings.userInput !== "string" && !Array.isArray(settings.userInput)) return `"settings.userInput" is neither a string nor a list of parts`;
  for (const key of ["maxTurns", "maxToolCalls", "timeoutMs", "maxRepeatedCalls", "maxDelegationDepth"]) {
    if (typeof settings[key] !== "number") return `"settings.${key}" is not a number`;
  }
  if (settings.model !== undefined && typeof settings.model !== "string") return `"settings.model" is not a string`;
  if (settings.output !== undefined && !isObject(settings.output)) return `"settings.output" is not a JSON Schema object`;
  if (settings.outputRetries !== undefined && (typeof settings.outputRetries !== "number" || !Number.isInteger(settings.outputRetries) || settings.outputRetries < 0)) {
    return `"settings.outputRetries" is not a whole number ≥ 0`;
  }
  if (settings.baseUrl !== undefined && !isHttpUrl(settings.baseUrl)) return `"settings.baseUrl" is not an http(s) URL`;
  if (settings.keySent !== undefined && typeof settings.keySent !== "boolean") return `"settings.keySent" is not true or false`;
  if (settings.provider !== undefined && typeof settings.provider !== "string") return `"settings.provider" is not a string`;
  if (settings.traceFile !== false && typeof settings.traceFile !== "string") return `"settings.traceFile" is neither a path nor false`;
  const p = settings.permissions;
  if (!isObject(p) || !isPermissionMode(p.mode) || !["allow", "ask", "deny"].every((k) => Array.isArray(p[k]) && (p[k] as unknown[]).every((r) => typeof r === "string"))) {
    return `"settings.permissions" is not { mode, allow, ask, deny } with a known mode`;
  }
  const usage = value.usage;
  if (!isObject(usage) || !["input", "output", "cached", "reasoning"].every((k) => typeof usage[k] === "number")) return `"usage" is not { input, output, cached, reasoning }`;
  if (!Array.isArray(value.messages) || !value.messages.every((m) => isObject(m) && typeof m.role === "string")) return `"messages" is not a list of messages`;
  if (!Array.isArray(value.batch)) return `"batch" is not a list`;
  for (const [i, r] of value.batch.entries()) {
    if (!isObject(r) || !isObject(r.call) || typeof r.call.id !== "string" || typeof r.call.name !== "string" || !isObject(r.raw) || !STATUSES.has(r.status as string)) {
      return `"batch[${i}]" is not a tool call record`;
    }
  }
  const bs = value.batchState;
  if (!isObject(bs) || typeof bs.open !== "boolean" || !isObject(bs.repeat)) return `"batchState" is not { open, hitToolLimit, repeat }`;
  if (!isObject(value.call) || typeof value.call.modelErrorAttempts !== "number") return `"call" is not { overflowCompacted, modelErrorAttempts }`;
  const inbox = value.inbox;
  if (!isObject(inbox) || !Array.isArray(inbox.steering) || !Array.isArray(inbox.followUp)) return `"inbox" is not { steering, followUp }`;
  if (!Array.isArray(value.pending) || (value.status === "suspended" && value.pending.length === 0)) return `"pending" is not a list of calls (a suspended run has at least one)`;
  const tc = value.traceContext;
  if (tc !== undefined && (!isObject(tc) || typeof tc.traceparent !== "string" || (tc.tracestate !== undefined && typeof tc.tracestate !== "string"))) {
    return `"traceContext" is not { traceparent, tracestate? }`;
  }
  for (const [i, c] of value.pending.entries()) {
    if (!isObject(c) || typeof c.callId !== "string" || typeof c.name !== "string" || typeof c.reason !== "string") return `"pending[${i}]" is not { callId, name, input, reason }`;
  }
  if (!Array.isArray(value.started) || !value.started.every((id) => typeof id === "string")) return `"started" is not a list of call ids`;
  return undefined;
}
