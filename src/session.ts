import { randomUUID } from "./util/node-crypto.js";
import { AgentError } from "./errors/agent-error.js";
import type { ToolCall, UserMessage } from "./models/messages.js";
import type { AnyTool, ToolCallOf } from "./tools/define-tool.js";
import { checkOptionNames, SESSION_OPTION_NAMES, type QueueMode, type SessionOptions } from "./options.js";
import type { Inbox, PendingCall } from "./machine/context.js";
import type { PermissionAnswer } from "./permissions/types.js";
import { prepare, startRun, withRecords, withResult, type EngineActor, type QueryRun, type RunLifecycle } from "./query.js";
import { resumeRun } from "./resume.js";

/** A conversation across runs, with the two queues of the two-level loop. */
export interface Session<Call extends ToolCall = ToolCall> {
  readonly sessionId: string;
  /** Runs the agent on `input`, continuing the conversation. Refused (`SESSION_BUSY`) while another run is active. */
  query(input: string): QueryRun<Call>;
  /** Queues a message that enters before the next model call, after the current tool batch has finished. */
  steer(message: string | UserMessage): void;
  /** Queues a message that runs only when the agent would otherwise stop. */
  followUp(message: string | UserMessage): void;
  /** Messages still waiting (copies). */
  readonly queued: { steering: UserMessage[]; followUp: UserMessage[] };
  /** True while a run of this session is active. */
  readonly running: boolean;
  /** The calls the session's suspended run waits on (docs/durable.md); undefined when no run of it is suspended. */
  readonly pending: PendingCall[] | undefined;
  /**
   * Resumes the suspended run with these answers (by call id), as `resume(sessionId, …)` with the session's options.
   * Messages queued while it was suspended go to it, after those it kept. Refused (`SESSION_BUSY`) while a run is
   * active; `RUN_NOT_FOUND` when nothing is suspended.
   */
  resume(answers?: Readonly<Record<string, PermissionAnswer>>, options?: { answeredBy?: string }): QueryRun<Call>;
}

const MODES: readonly QueueMode[] = ["one-at-a-time", "all"];

/**
 * A session: `query()`'s options plus `steeringMode` and `followUpMode`. Between runs the session holds the queues;
 * during a run the engine does (a queued message is sent to it), and when the run ends the messages it did not take
 * come back to the session, in order: an aborted run loses none and delivers none twice.
 */
export function createSession<const Tools extends readonly AnyTool[] = readonly AnyTool[]>(typed: SessionOptions<Tools>): Session<ToolCallOf<Tools>> {
  // The engine holds the tools and hooks untyped; the session's runs are typed by them again (QueryRun<Call>).
  return openSession(typed as unknown as SessionOptions) as unknown as Session<ToolCallOf<Tools>>;
}

function openSession(options: SessionOptions): Session {
  if (options && typeof options === "object") checkOptionNames(options, SESSION_OPTION_NAMES, "createSession()");
  for (const key of ["steeringMode", "followUpMode"] as const) {
    const mode = options[key];
    if (mode !== undefined && !MODES.includes(mode)) {
      throw new AgentError("INVALID_OPTIONS", `options.${key} must be "one-at-a-time" or "all", got ${JSON.stringify(mode)}`);
    }
  }
  const sessionId = options.sessionId ?? randomUUID();
  // Checks the options at once, as query() does.
  prepare("", options, { sessionId });
  const steering: UserMessage[] = [];
  const followUps: UserMessage[] = [];
  let active: EngineActor | undefined;
  /**
   * A run past its refuse() check whose engine has not started yet (it takes its lock and makes its files first, which
   * waits on the disk or a database): the session is busy, and what is queued meanwhile goes to that run's inbox.
   */
  let starting: Inbox | undefined;
  let pending: PendingCall[] | undefined;

  const toMessage = (message: string | UserMessage, what: string): UserMessage => {
    if (typeof message === "string") return { role: "user", content: message };
    if (message && message.role === "user" && typeof message.content === "string") return { role: "user", content: message.content };
    throw new AgentError("INVALID_OPTIONS", `session.${what}(message): message must be a string or { role: "user", content: string }`);
  };
  const tracking: Pick<RunLifecycle, "started" | "settled" | "notStarted"> = {
    started: (actor) => {
      starting = undefined;
      active = actor;
      pending = undefined;
    },
    notStarted: () => {
      // The run failed before its engine started: what it took from the queues comes back.
      if (!starting) return;
      steering.unshift(...starting.steering);
      followUps.unshift(...starting.followUp);
      starting = undefined;
    },
    settled: (context, suspended) => {
      if (active === undefined) return;
      active = undefined;
      // A suspended run keeps its queued messages (stored with it); a finished one gives back what it did not claim.
      if (suspended) {
        pending = suspended.pending;
        return;
      }
      steering.unshift(...context.inbox.steering);
      followUps.unshift(...context.inbox.followUp);
    },
  };
  const engineRunning = () => active !== undefined && active.getSnapshot().status === "active";

  return {
    sessionId,
    get running() {
      return active !== undefined || starting !== undefined;
    },
    get pending() {
      return pending ? pending.map((c) => ({ ...c })) : undefined;
    },
    get queued() {
      return { steering: [...steering], followUp: [...followUps] };
    },
    steer(message) {
      const m = toMessage(message, "steer");
      if (engineRunning()) active!.send({ type: "inbox.steer", message: m });
      else (starting?.steering ?? steering).push(m);
    },
    followUp(message) {
      const m = toMessage(message, "followUp");
      if (engineRunning()) active!.send({ type: "inbox.followUp", message: m });
      else (starting?.followUp ?? followUps).push(m);
    },
    query(input) {
      const prepared = prepare(input, options, {
        sessionId,
        steeringMode: options.steeringMode ?? "one-at-a-time",
        followUpMode: options.followUpMode ?? "one-at-a-time",
      });
      return startRun(prepared, options, {
        refuse: () => {
          if (active || starting) return new AgentError("SESSION_BUSY", `session ${sessionId} is already running a query; wait for it to end, or use steer()/followUp() to queue messages`);
          if (pending) return new AgentError("SESSION_BUSY", `session ${sessionId} has a suspended run waiting on ${pending.map((c) => c.callId).join(", ")}; resume it with session.resume(answers)`);
          // The run takes the queues over; what it does not claim comes back when it settles.
          prepared.input.inbox = { steering: steering.splice(0), followUp: followUps.splice(0) };
          starting = prepared.input.inbox;
          return undefined;
        },
        ...tracking,
      });
    },
    resume(answers = {}, resumeOptions = {}) {
      if (active || starting) {
        const refused = new AgentError("SESSION_BUSY", `session ${sessionId} is already running a query; wait for it to end`);
        return refusedRun(sessionId, refused, options.store);
      }
      // The messages queued meanwhile go to the resumed run (after those it kept); unclaimed ones come back.
      const queued = () => ({ steering: steering.splice(0), followUp: followUps.splice(0) });
      return resumeRun(sessionId, { ...options, answers, ...(resumeOptions.answeredBy !== undefined ? { answeredBy: resumeOptions.answeredBy } : {}) }, tracking, queued);
    },
  };
}

/** A QueryRun whose first next() rejects with `error` (a run that may not start). */
function refusedRun(sessionId: string, error: AgentError, store: SessionOptions["store"]): QueryRun {
  const generator = (async function* () {
    throw error;
  })() as unknown as QueryRun;
  withResult(generator, sessionId);
  withRecords(generator, store, () => undefined);
  generator.abort = () => undefined;
  return generator;
}
