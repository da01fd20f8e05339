import { randomUUID } from "node:crypto";
import { AgentError } from "../errors/agent-error.js";
import { checkRunOptions, narrowPermissions, type RunOptions } from "../dbos/run-options.js";
import { DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_MS } from "../options.js";
import type { PermissionAnswer, PermissionMode, PermissionOptions } from "../permissions/types.js";
import { checkSessionId } from "../record/transcript.js";
import { HttpProblem, objectOf } from "./http-guard.js";

/** What the server runs with unless a request narrows it: its permissions and limits. */
export interface ServerRunSettings {
  permissions: Omit<PermissionOptions, "onAsk" | "whenUnanswered">;
  limits: Omit<RunOptions, "permissions">;
}

/** A checked `POST /runs` body. */
export interface StartRequest {
  input: string;
  sessionId: string;
  /** The run's options: the server's, narrowed by the request's. */
  options: Omit<RunOptions, "permissions">;
  permissions: PermissionOptions;
}

const MODE_RANK: Record<PermissionMode, number> = { plan: 0, default: 1, acceptEdits: 2, bypassPermissions: 3 };
// Limits a request may lower, never raise: what the server would use when the request says nothing.
const CEILINGS = { maxTurns: DEFAULT_MAX_TURNS, maxToolCalls: DEFAULT_MAX_TOOL_CALLS, timeoutMs: DEFAULT_TIMEOUT_MS, maxTokens: Infinity, maxRepeatedCalls: 3 } as const;

/** `{ input, sessionId?, options? }`, checked; 400 naming what is wrong. */
export function startRequestOf(body: unknown, server: ServerRunSettings, where = "POST /runs"): StartRequest {
  const b = objectOf(body, `${where}: the body`);
  for (const key of Object.keys(b)) {
    if (!["input", "sessionId", "options"].includes(key)) throw bad(`${where}: ${JSON.stringify(key)} is not a field of the body; send { input, sessionId?, options? }`);
  }
  if (typeof b.input !== "string" || b.input.trim() === "") throw bad(`${where}: input must be a non-empty string (what the agent should do), got ${JSON.stringify(b.input ?? null)}`);
  const sessionId = b.sessionId === undefined ? randomUUID() : sessionIdOf(b.sessionId, `${where}: sessionId`);
  const given = b.options === undefined ? {} : objectOf(b.options, `${where}: options`);
  let checked: RunOptions;
  try {
    checked = checkRunOptions(given, where);
  } catch (error) {
    throw bad((error as Error).message);
  }
  return { input: b.input, sessionId, ...narrowed(checked, server, where) };
}

/** The server's settings narrowed by a request's: lower limits, more deny and ask rules, a stricter mode. */
export function narrowed(run: RunOptions, server: ServerRunSettings, where: string): Pick<StartRequest, "options" | "permissions"> {
  const { permissions: rules = {}, ...limits } = run;
  const options: Omit<RunOptions, "permissions"> = { ...server.limits };
  for (const [key, value] of Object.entries(limits) as Array<[keyof typeof limits, unknown]>) {
    if (value === undefined) continue;
    const ceiling = key in CEILINGS ? ((server.limits as Record<string, unknown>)[key] as number | undefined) ?? CEILINGS[key as keyof typeof CEILINGS] : undefined;
    if (ceiling !== undefined && (value as number) > ceiling) throw bad(`${where}: options.${key} ${String(value)} is above this server's ${ceiling}; a request may lower the server's limits, never raise them`);
    (options as Record<string, unknown>)[key] = value;
  }
  const serverMode = server.permissions.mode ?? "default";
  if (rules.mode !== undefined && MODE_RANK[rules.mode] > MODE_RANK[serverMode]) {
    throw bad(`${where}: options.permissions.mode "${rules.mode}" lets more run than this server's "${serverMode}"; a request may narrow the server's permissions, never widen them (give "${serverMode}" or a stricter mode)`);
  }
  const serverAllow = server.permissions.allow ?? [];
  const wider = (rules.allow ?? []).filter((rule) => !serverAllow.includes(rule));
  if (wider.length > 0) throw bad(`${where}: options.permissions.allow ${JSON.stringify(wider)} would allow what this server does not (its allow rules: ${JSON.stringify(serverAllow)}); a request may only keep some of the server's allow rules`);
  return { options, permissions: narrowPermissions(server.permissions, rules) };
}

/** A session id from a request, checked as the engine checks one. */
export function sessionIdOf(value: unknown, what: string): string {
  if (typeof value !== "string") throw bad(`${what} must be a string, got ${JSON.stringify(value)}`);
  try {
    checkSessionId(value);
    return value;
  } catch (error) {
    throw bad(`${what}: ${(error as Error).message}`);
  }
}

const ANSWERS: readonly string[] = ["allow", "deny", "allow_always"];

/** `{ answers: { [callId]: "allow" | "deny" | "allow_always" } }`, checked. */
export function answersOf(body: unknown, where: string): Record<string, PermissionAnswer> {
  const b = objectOf(body, `${where}: the body`);
  for (const key of Object.keys(b)) if (key !== "answers") throw bad(`${where}: ${JSON.stringify(key)} is not a field of the body; send { answers: { [callId]: "allow" | "deny" | "allow_always" } }`);
  const answers = objectOf(b.answers, `${where}: answers`);
  if (Object.keys(answers).length === 0) throw bad(`${where}: answers is empty; answer at least one pending call by its id`);
  for (const [id, answer] of Object.entries(answers)) {
    if (typeof answer !== "string" || !ANSWERS.includes(answer)) throw bad(`${where}: answers[${JSON.stringify(id)}] must be "allow", "deny" or "allow_always", got ${JSON.stringify(answer)}`);
  }
  return answers as Record<string, PermissionAnswer>;
}

export const bad = (message: string) => new HttpProblem(400, "INVALID_REQUEST", message);

/** The HTTP status an engine error is answered with. */
export function problemOfError(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof AgentError) {
    const status = error.code === "INVALID_OPTIONS" ? 400 : error.code === "SESSION_BUSY" || error.code === "RUN_BUSY" ? 409 : error.code === "RUN_NOT_FOUND" ? 404 : 500;
    return new HttpProblem(status, error.code, error.message);
  }
  return new HttpProblem(500, "INTERNAL", `the server failed: ${(error as Error)?.message ?? String(error)}`);
}
