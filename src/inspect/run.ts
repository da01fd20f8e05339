import type { AgentEvent } from "../events.js";
import type { EngineObserver } from "../machine/observe.js";
import type { PermissionRequest } from "../permissions/types.js";
import { TraceDetails } from "../record/details.js";
import { TRACE_VERSION } from "../record/format.js";
import { isoTime } from "../record/iso-time.js";
import { mayHoldSecret, redactLine, redactOwnPart, redactText, redactValue, secretValues } from "../record/redact.js";
import type { InspectorHub } from "./hub.js";
import type { InspectorRecord } from "./protocol.js";
import { ContextText } from "./context-text.js";
import { RedactedDeltas } from "./redacted-deltas.js";
import { toJsonText, toJsonTextAt } from "./serialize.js";

/** One agent run as the inspector shows it. */
export interface InspectedRun {
  readonly sessionId: string;
  /**
   * Add to the engine's observers (`observeEngine([...writers, run.observer])`): every state entered, with the
   * line the trace gets for it (seq, time, turn, details) and the context as it stood then (counters, the
   * conversation so far, the current calls and their results, errors), and every event the machine emits
   * (text, tool calls and results, permission requests, retries), in their true order.
   */
  readonly observer: EngineObserver;
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
  requestPermission(request: PermissionRequest, options?: { signal?: AbortSignal }): Promise<"allow" | "deny">;
  /** The run is over: the page stops its clock. */
  end(): void;
}

/** What the inspector needs to know about a run when it starts. */
export interface InspectedRunInfo {
  sessionId: string;
  /** The user's input, shown with the run's name. */
  input?: string;
  /** The run's options as the trace records them on its build_context line. */
  runOptions?: Record<string, unknown>;
  /** The session this one was forked from or is a subagent of. */
  parentSession?: string;
}


/** Event types the observer delivers itself (the rest of AgentEvent comes only through `publish`). */
const OBSERVED = new Set<AgentEvent["type"]>(["state", "text_delta", "thinking_delta", "retry", "tool_start", "tool_result", "permission_request"]);

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

  const details = new TraceDetails(info.runOptions ?? {});
  // Numbered like the trace's lines (retries take a number too), so a transition's seq is its trace line's.
  let seq = 0;
  let turn = 0;
  let observed = false;
  let messagesSent = 0;
  let ended = false;

  // The observer's records are written as text (the JSON of the record objects in protocol.ts, key for key), each
  // value serialised once, straight from the run's objects: they are made at every state whether a page is
  // connected or not (a page that connects later is sent them all).
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
  const addOwn = (text: string, own: string) => hub.addText(framesHold ? redactLine(text, secrets) : redactOwnPart(text, own, secrets), sessionId);
  const addAgentRecord = (event: unknown) => {
    const own = toJsonText(event);
    addOwn(`{"kind":"agent","time":"${isoTime()}","sessionId":${session},"event":${own}}`, own);
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

  const observer: EngineObserver = {
    state(entered) {
      observed = true;
      if (entered.state !== "stream_text") flushDeltas();
      const context = entered.context as unknown as Record<string, unknown>;
      turn = entered.context.turn;
      const messages = Array.isArray(context.messages) ? (context.messages as unknown[]) : [];
      // The conversation only grows during a run; if it was replaced, it is sent again from the start.
      const start = messages.length < messagesSent ? 0 : messagesSent;
      if (messages.length > start) {
        const list: string[] = [];
        for (let i = start; i < messages.length; i++) list.push(toJsonText(messages[i]));
        const own = list.join(",");
        addOwn(`{"kind":"messages","sessionId":${session},"start":${start},"messages":[${own}]}`, own);
      }
      messagesSent = messages.length;
      // The trace line as toJsonText gives it for { v, sessionId, seq, parentSession?, time, kind, state, turn,
      // details }: written around the details' text, which is the line's only part that needs scanning.
      const own = toJsonTextAt(details.of(entered), 1);
      const line = `${lineHead}${seq++}${parent},"time":"${isoTime(entered.time)}","kind":"state","state":${JSON.stringify(entered.state)},"turn":${turn},"details":${own}}`;
      // Joined rather than concatenated: the hub keeps every record for the whole run, and a concatenated string is a
      // tree of its pieces that each major collection walks again; a joined one is a single flat string.
      // The context's text comes redacted (and kept) group by group from contextText, the rest is redacted here.
      hub.addText(
        [
          `{"kind":"enter","sessionId":${session},"line":`,
          framesHold ? redactLine(line, secrets) : redactOwnPart(line, own, secrets),
          `,"event":${JSON.stringify(entered.event.type)},"context":`,
          contextText.of(context),
          `,"messageCount":${messages.length}}`,
        ].join(""),
        sessionId,
      );
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

  return {
    sessionId,
    observer,
    publish(event) {
      if (observed && OBSERVED.has(event.type)) return;
      flushDeltas();
      addAgentRecord(event);
    },
    requestPermission(request, options) {
      // Tool input is parsed JSON, so it redacts through its text; a value JSON cannot hold is passed on as it is
      // and the hub shows it cut, with Allow off.
      let call: unknown = request.call;
      try {
        call = redactValue(request.call, secrets);
      } catch {
        call = request.call;
      }
      return hub.requestPermission(sessionId, call, redactText(request.reason, secrets), options?.signal);
    },
    end() {
      if (ended) return;
      ended = true;
      hub.add({ kind: "run_end", time: new Date().toISOString(), sessionId });
    },
  };
}
