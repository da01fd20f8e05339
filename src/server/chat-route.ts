import type { PermissionAnswer } from "../permissions/types.js";
import { HttpProblem, objectOf, readJson, SSE_HEADERS } from "./http-guard.js";
import type { RunLog } from "./run-log.js";
import { bad, narrowed, sessionIdOf } from "./run-request.js";
import type { RouteContext } from "./serve.js";
import { streamResponse } from "./sse.js";
import { uiChunks, uiMessageSse, UI_MESSAGE_STREAM_HEADERS, type UIMessageStreamOptions } from "./ui-message-stream.js";

interface UIPart {
  type?: unknown;
  text?: unknown;
  toolCallId?: unknown;
  state?: unknown;
  approval?: { id?: unknown; approved?: unknown };
}
interface UIMessageBody {
  id?: unknown;
  role?: unknown;
  parts?: unknown;
}

/**
 * `POST /api/chat`: what `useChat` sends (`{ id, messages, trigger, messageId }`), the chat id being the session. A
 * last message from the user starts a run on its text (the session holds the conversation before it); a last
 * assistant message whose tool parts carry approval responses answers the session's suspended run. The answer is the
 * UI message stream of the run until it ends or asks again.
 */
export async function chatRoute(context: RouteContext): Promise<Response> {
  const body = objectOf(await readJson(context.request, context.maxBodyBytes), "POST /api/chat: the body");
  const sessionId = sessionIdOf(body.id, "POST /api/chat: id (the chat id, which is the session id)");
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw bad("POST /api/chat: messages must be the chat's UI messages (a non-empty array), as useChat sends them");
  const last = objectOf(body.messages[body.messages.length - 1], "POST /api/chat: the last message") as UIMessageBody;
  const parts = Array.isArray(last.parts) ? (last.parts as UIPart[]) : undefined;
  if (!parts) throw bad("POST /api/chat: the last message has no parts array (AI SDK 5 or later UI messages have { id, role, parts })");
  if (last.role === "assistant") return approve(context, sessionId, last, parts);
  if (last.role !== "user") throw bad(`POST /api/chat: the last message must be the user's (a new message) or the assistant's with approval responses, got role ${JSON.stringify(last.role)}`);
  // The session keeps the conversation: only the new message's text is the run's input.
  const other = parts.find((p) => p.type !== "text");
  if (other) throw bad(`POST /api/chat: the last user message has a ${JSON.stringify(other.type)} part; this server takes text only (send the message's text)`);
  const input = parts
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text as string)
    .join("\n");
  if (input.trim() === "") throw bad("POST /api/chat: the last user message has no text part; send the message's text");
  const { options, permissions } = narrowed({}, context.settings, "POST /api/chat");
  const log = await context.runner.start({ input, sessionId, options, permissions });
  return uiResponse(log, 0, { messageId: `${log.runId}-1` });
}

/** The approval responses of the assistant message answer the session's suspended run; its stream goes on. */
async function approve(context: RouteContext, sessionId: string, last: UIMessageBody, parts: UIPart[]): Promise<Response> {
  const answers: Record<string, PermissionAnswer> = {};
  for (const part of parts) {
    if (part.state !== "approval-responded" || !part.approval || typeof part.approval.id !== "string") continue;
    if (typeof part.approval.approved !== "boolean") throw bad(`POST /api/chat: the approval ${JSON.stringify(part.approval.id)} has no approved true or false`);
    answers[part.approval.id] = part.approval.approved ? "allow" : "deny";
  }
  if (Object.keys(answers).length === 0) throw bad("POST /api/chat: the last message is the assistant's but answers no approval (no tool part in state approval-responded); send a user message, or the approval responses");
  const log = (await context.runner.runsOf(sessionId)).findLast((l) => l.status === "suspended");
  if (!log) throw new HttpProblem(409, "RUN_NOT_SUSPENDED", `chat ${sessionId} has no run waiting for an approval; its questions were answered already, or it ended`);
  const from = log.lastId;
  await context.runner.answer(log, answers, "statecraft serve (POST /api/chat approval)");
  return uiResponse(log, from, { ...(typeof last.id === "string" ? { messageId: last.id } : {}), knownCalls: Object.keys(answers) });
}

/**
 * `GET /api/chat/:id/stream` (`useChat({ resume: true })` after a reload): the chat's running run replayed from its
 * start (its answered approvals included) and then live, or 204 when nothing runs.
 */
export async function chatStreamRoute(context: RouteContext, id: string): Promise<Response> {
  const sessionId = sessionIdOf(id, "the chat id in /api/chat/:id/stream");
  const log = (await context.runner.runsOf(sessionId)).findLast((l) => l.status === "running");
  if (!log) return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
  const answered = log.events.filter((e) => e.type === "suspended").length;
  return uiResponse(log, 0, { messageId: `${log.runId}-1`, answered });
}

function uiResponse(log: RunLog, from: number, options: UIMessageStreamOptions): Response {
  return streamResponse(
    (signal) => uiMessageSse(uiChunks(log.part(from, signal, options.answered), options)),
    { ...SSE_HEADERS, ...UI_MESSAGE_STREAM_HEADERS },
  );
}

