import { randomUUID } from "node:crypto";
import { AgentError } from "./errors/agent-error.js";
import type { UserMessage } from "./models/messages.js";
import type { QueueMode, SessionOptions } from "./options.js";
import { prepare, startRun, type EngineActor, type QueryRun } from "./query.js";

/** A conversation across runs, with the two queues of the two-level loop. */
export interface Session {
  readonly sessionId: string;
  /** Runs the agent on `input`, continuing the conversation. Refused (`SESSION_BUSY`) while another run is active. */
  query(input: string): QueryRun;
  /** Queues a message that enters before the next model call, after the current tool batch has finished. */
  steer(message: string | UserMessage): void;
  /** Queues a message that runs only when the agent would otherwise stop. */
  followUp(message: string | UserMessage): void;
  /** Messages still waiting (copies). */
  readonly queued: { steering: UserMessage[]; followUp: UserMessage[] };
  /** True while a run of this session is active. */
  readonly running: boolean;
}

const MODES: readonly QueueMode[] = ["one-at-a-time", "all"];

/**
 * A session: `query()`'s options plus `steeringMode` and `followUpMode`. Between runs the session holds the queues;
 * during a run the engine does (a queued message is sent to it), and when the run ends the messages it did not take
 * come back to the session, in order: an aborted run loses none and delivers none twice.
 */
export function createSession(options: SessionOptions): Session {
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

  const toMessage = (message: string | UserMessage, what: string): UserMessage => {
    if (typeof message === "string") return { role: "user", content: message };
    if (message && message.role === "user" && typeof message.content === "string") return { role: "user", content: message.content };
    throw new AgentError("INVALID_OPTIONS", `session.${what}(message): message must be a string or { role: "user", content: string }`);
  };
  const engineRunning = () => active !== undefined && active.getSnapshot().status === "active";

  return {
    sessionId,
    get running() {
      return active !== undefined;
    },
    get queued() {
      return { steering: [...steering], followUp: [...followUps] };
    },
    steer(message) {
      const m = toMessage(message, "steer");
      if (engineRunning()) active!.send({ type: "inbox.steer", message: m });
      else steering.push(m);
    },
    followUp(message) {
      const m = toMessage(message, "followUp");
      if (engineRunning()) active!.send({ type: "inbox.followUp", message: m });
      else followUps.push(m);
    },
    query(input) {
      const prepared = prepare(input, options, {
        sessionId,
        steeringMode: options.steeringMode ?? "one-at-a-time",
        followUpMode: options.followUpMode ?? "one-at-a-time",
      });
      return startRun(prepared, options, {
        refuse: () => {
          if (active) return new AgentError("SESSION_BUSY", `session ${sessionId} is already running a query; wait for it to end, or use steer()/followUp() to queue messages`);
          // The run takes the queues over; what it does not claim comes back when it settles.
          prepared.input.inbox = { steering: steering.splice(0), followUp: followUps.splice(0) };
          return undefined;
        },
        started: (actor) => {
          active = actor;
        },
        settled: (context) => {
          if (active === undefined) return;
          active = undefined;
          steering.unshift(...context.inbox.steering);
          followUps.unshift(...context.inbox.followUp);
        },
      });
    },
  };
}
