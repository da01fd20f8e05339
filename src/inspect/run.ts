import type { AgentEvent } from "../events.js";
import type { InternalObserver } from "../observers/observe.js";
import type { PermissionRequest } from "../permissions/types.js";
import { TraceDetails } from "../observers/details.js";
import { TRACE_VERSION } from "../record/format.js";
import type { TracedRunOptions } from "../record/settings-record.js";
import { isoTime } from "../record/iso-time.js";
import { mayHoldSecret, redactLine, redactOwnPart, redactText, redactValue, secretValues } from "../record/redact.js";
import type { InspectorHub } from "./hub.js";
import type { InspectorRecord } from "./protocol.js";
import { approxBytes } from "./approx-bytes.js";
import { ContextText } from "./context-text.js";
import { RedactedDeltas } from "./redacted-deltas.js";
import { toJsonText, toJsonTextAt } from "./serialize.js";

/**
 * One agent run as the inspector shows it. The engine feeds it (`query({ inspect })` does): every state entered,
 * with the line the trace gets for it and the context as it stood then, and every event the machine emits, in their
 * true order.
 */
export interface InspectedRun {
  readonly sessionId: string;
  /**
   * An event the run yields. Only what the observer does not see is recorded (`turn_end`), so passing every
   * yielded event is fine; before the observer has seen anything, every event is recorded.
   */
  publish(event: AgentEvent): void;
  /**
   * Shows a permission request on the connected pages (buttons `Allow` and `Deny`) and resolves with the answer.
   * Denied when the inspector closes or no page is connected for the grace period; aborting `signal` (another
   * prompt answered first) withdraws it from the pages and rejects with the signal's reason.
   */
  requestPermission(request: PermissionRequest, options?: PermissionRequestOptions): Promise<"allow" | "deny">;
  /** The run is over: the page stops its clock. */
  end(): void;
}

/** How a permission request is put to the pages. */
export interface PermissionRequestOptions {
  /** Withdraws the request from the pages (another prompt answered first); the promise rejects with its reason. */
  signal?: AbortSignal;
  /**
   * The same question is asked elsewhere too (a terminal): the request then waits however long no page is connected,
   * instead of being denied after the grace period, so a page opened or reloaded later is shown it with its buttons.
   */
  askedElsewhere?: boolean;
}

/** What the inspector needs to know about a run when it starts. */
export interface InspectedRunInfo {
  sessionId: string;
  /** The user's input, shown with the run's name. */
  input?: string;
  /** The run's options as the trace records them on its build_context line. */
  runOptions?: TracedRunOptions;
  /** The session this one was forked from or is a subagent of. */
  parentSession?: string;
}


/** What an unwritten record holds besides its values (the closure, the record's own numbers), for the hub's bound. */
const RECORD_BYTES = 256;



/** Event types the observer delivers itself (the rest of AgentEvent comes only through `publish`). */
const OBSERVED = new Set<AgentEvent["type"]>(["state", "text_delta", "thinking_delta", "retry", "tool_start", "tool_result", "permission_request"]);

// The engine's observer of each run, kept off the public type: its calls carry the engine's own context.
const observers = new WeakMap<InspectedRun, InternalObserver>();

/** The engine observer that feeds an inspected run (`observeEngine([...writers, engineObserverOf(run)])`). */
export function engineObserverOf(run: InspectedRun): InternalObserver {
  const observer = observers.get(run);
  if (!observer) throw new Error(`inspected run ${run.sessionId} was not made by an inspector of this process`);
  return observer;
}

export function createInspectedRun(hub: InspectorHub, info: InspectedRunInfo, chartId: string): InspectedRun {
  const { sessionId } = info;
  // Every record is redacted as the trace is (a page, or anyone who can reach the port, sees them); the run itself
  // goes on with the real values.
  const secrets = secretValues();
  const add = (text: string) => hub.addText(redactLine(text, secrets), sessionId);
  const runRecord: InspectorRecord = {
    kind: "run",
    time: new Date().toISOString(),
    sessionId,
    chartId,
    ...(info.input !== undefined ? { input: info.input } : {}),
    ...(info.parentSession !== undefined ? { parentSession: info.parentSession } : {}),
  };
  add(JSON.stringify(runRecord));

  const details = new TraceDetails(info.runOptions);
  // Numbered like the trace's lines (retries take a number too), so a transition's seq is its trace line's.
  let seq = 0;
  let turn = 0;
  let observed = false;
  let messagesSent = 0;
  let ended = false;

  // The observer's records are the JSON of the record objects in protocol.ts, key for key, each value serialised once,
  // straight from the run's objects. They are made at every state whether a page is connected or not (a page that
  // connects later is sent them all), but written only when the hub needs their text (addLater): with no page, most
  // never are. So each record holds what it is written from, taken now: values the run replaces whole are held as
  // they are, the batch's call records (changed in place) as shallow copies.
  const session = JSON.stringify(sessionId);
  // The text around each record's own part (the event, the messages, the state's details) is the same for the whole
  // run: scanned for secrets once here, so that each record only scans its own part (redactOwnPart).
  const parent = info.parentSession !== undefined ? `,"parentSession":${JSON.stringify(info.parentSession)}` : "";
  const lineHead = `{"v":${JSON.stringify(TRACE_VERSION)},"sessionId":${session},"seq":`;
  const framesHold =
    mayHoldSecret(session) ||
    mayHoldSecret(parent) ||
    mayHoldSecret(lineHead) ||
    mayHoldSecret(`{"kind":"agent","time":"","sessionId":,"event":{"kind":"messages","sessionId":,"start":,"messages":[,"time":"","kind":"state","state":,"turn":,"details":`);
  const redactedAround = (text: string, own: string) => (framesHold ? redactLine(text, secrets) : redactOwnPart(text, own, secrets));
  const later = (write: () => string, estimate: number) => hub.addLater(write, estimate, sessionId);
  const addAgentRecord = (event: unknown) => {
    const time = Date.now();
    later(() => {
      const own = toJsonText(event);
      return redactedAround(`{"kind":"agent","time":"${isoTime(time)}","sessionId":${session},"event":${own}}`, own);
    }, RECORD_BYTES + approxBytes(event));
  };

  const contextText = new ContextText(secrets);
  const deltas = { text_delta: new RedactedDeltas(secrets), thinking_delta: new RedactedDeltas(secrets) };
  /** The held back end of streamed text, once the stream is over (another event, or a state after stream_text). */
  const flushDeltas = () => {
    for (const type of ["thinking_delta", "text_delta"] as const) {
      const text = deltas[type].flush();
      if (text !== "") addAgentRecord({ type, text });
    }
  };
  /** The context groups the last enter record holds: a group held again costs no more memory. */
  let lastContext: Record<string, unknown> = {};

  const observer: InternalObserver = {
    state(entered) {
      observed = true;
      if (entered.state !== "stream_text") flushDeltas();
      const context = entered.context as unknown as Record<string, unknown>;
      turn = entered.context.turn;
      // Read now, up to its length now: entries of a conversation's list below its length never change.
      const messages = entered.context.messages.toArray();
      // The conversation only grows during a run (a new one adds to the last); if it was replaced, it is sent again
      // from the start.
      const start = messages.length < messagesSent ? 0 : messagesSent;
      const end = messages.length;
      if (end > start) {
        let estimate = RECORD_BYTES;
        for (let i = start; i < end; i++) estimate += approxBytes(messages[i]);
        later(() => {
          const list: string[] = [];
          for (let i = start; i < end; i++) list.push(toJsonText(messages[i]));
          const own = list.join(",");
          return redactedAround(`{"kind":"messages","sessionId":${session},"start":${start},"messages":[${own}]}`, own);
        }, estimate);
      }
      messagesSent = end;
      // Taken now: the details say what the batch is at this state, and the traced-call sets move on.
      const lineDetails = details.of(entered);
      const lineSeq = seq++;
      const lineTurn = turn;
      // Taken apart now: the record may be written long after this state, from whatever `entered` then holds.
      const { time: enteredAt, state: enteredState } = entered;
      const eventType = entered.event.type;
      // Held as it is until the record is written: the context is a value (the engine replaces what it changes).
      const held = context;
      let estimate = RECORD_BYTES + approxBytes(lineDetails);
      for (const key in held) if (held[key] !== lastContext[key]) estimate += approxBytes(held[key]);
      lastContext = held;
      later(() => {
        // The trace line as toJsonText gives it for { v, sessionId, seq, parentSession?, time, kind, state, turn,
        // details }: written around the details' text, which is the line's only part that needs scanning.
        const own = toJsonTextAt(lineDetails, 1);
        const line = `${lineHead}${lineSeq}${parent},"time":"${isoTime(enteredAt)}","kind":"state","state":${JSON.stringify(enteredState)},"turn":${lineTurn},"details":${own}}`;
        // Joined rather than concatenated: the hub keeps every record for the whole run, and a concatenated string is
        // a tree of its pieces that each major collection walks again; a joined one is a single flat string.
        // The context's text comes redacted (and kept) group by group from contextText, the rest is redacted here.
        return [
          `{"kind":"enter","sessionId":${session},"line":`,
          redactedAround(line, own),
          `,"event":${JSON.stringify(eventType)},"context":`,
          contextText.of(held),
          `,"messageCount":${end}}`,
        ].join("");
      }, estimate);
    },
    emitted(event) {
      observed = true;
      if (event.type === "text_delta" || event.type === "thinking_delta") {
        const text = deltas[event.type].push(event.text);
        if (text !== "") addAgentRecord({ type: event.type, text });
        return;
      }
      flushDeltas();
      if (event.type === "retry") seq++;
      addAgentRecord(event);
    },
  };

  const run: InspectedRun = {
    sessionId,
    publish(event) {
      if (observed && OBSERVED.has(event.type)) return;
      flushDeltas();
      addAgentRecord(event);
    },
    requestPermission(request, options) {
      // Tool input is parsed JSON, so it redacts through its text; a value JSON cannot hold is passed on as it is
      // and the hub shows it cut, with Allow off.
      // A page shows the redacted call; when redaction changed it (`export API_TOKEN="$(touch x)"` looks like a secret
      // and shows as [REDACTED]) the page does not show what would run, so it may not allow it.
      let call: unknown = request.call;
      let hidden: string | undefined;
      try {
        call = redactValue(request.call, secrets);
        if (JSON.stringify(call) !== JSON.stringify(request.call)) {
          hidden = "parts of the call that look like secrets are shown redacted, so the page does not show exactly what would run";
        }
      } catch {
        call = request.call;
      }
      return hub.requestPermission(sessionId, call, redactText(request.reason, secrets), options?.signal, options?.askedElsewhere === true, hidden);
    },
    end() {
      if (ended) return;
      ended = true;
      hub.add({ kind: "run_end", time: new Date().toISOString(), sessionId });
    },
  };
  observers.set(run, observer);
  return run;
}
