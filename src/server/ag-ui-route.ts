import type { PermissionAnswer } from "../permissions/types.js";
import { HttpProblem, objectOf, readJson, SSE_HEADERS } from "./http-guard.js";
import { bad, narrowed, sessionIdOf } from "./run-request.js";
import type { RouteContext } from "./serve.js";
import { streamResponse } from "./sse.js";
import { toAgUiEvents } from "./ag-ui.js";
import type { AgentEvent } from "../events.js";
import type { RunLog } from "./run-log.js";

const ANSWERS: readonly string[] = ["allow", "deny", "allow_always"];

/**
 * `POST /ag-ui`: an AG-UI `RunAgentInput`. Its `threadId` is the session. With `resume` entries it answers the thread's
 * run waiting at permission questions (each entry's `interruptId` a pending call id; `payload` "allow", "deny",
 * "allow_always" or `{ approved }`; a `cancelled` entry denies); else its last message, the user's, is the input.
 * The answer streams the run's AG-UI events until it finishes or is interrupted again.
 */
export async function agUiRoute(context: RouteContext): Promise<Response> {
  const input = objectOf(await readJson(context.request, context.maxBodyBytes), "POST /ag-ui: the body (a RunAgentInput)");
  const threadId = sessionIdOf(input.threadId, "POST /ag-ui: threadId (the session)");
  if (typeof input.runId !== "string" || input.runId === "") throw bad("POST /ag-ui: runId must be a non-empty string (the client's id of this run)");
  if (!Array.isArray(input.messages)) throw bad("POST /ag-ui: messages must be an array (RunAgentInput.messages)");
  if (Array.isArray(input.tools) && input.tools.length > 0) throw bad("POST /ag-ui: tools are frontend tools, which this server does not call; the agent's tools are the server's (send tools: [])");
  const runId = input.runId;
  if (input.resume !== undefined) {
    const answers = answersOf(input.resume);
    const log = (await context.runner.runsOf(threadId)).findLast((l) => l.status === "suspended");
    if (!log) throw new HttpProblem(409, "RUN_NOT_SUSPENDED", `thread ${threadId} has no run waiting at an interrupt; its interrupts were answered already, or it ended`);
    const from = log.lastId;
    await context.runner.answer(log, answers, "statecraft serve (POST /ag-ui resume)");
    return agUiResponse(log, from, { threadId, runId, input, knownCalls: Object.keys(answers) });
  }
  const last = input.messages[input.messages.length - 1] as { role?: unknown; content?: unknown } | undefined;
  if (!last || last.role !== "user") throw bad("POST /ag-ui: the last message must be the user's (the run's input), or send resume entries answering the interrupts");
  const content = last.content;
  const parts = Array.isArray(content) ? (content as Array<{ type?: unknown; text?: unknown }>) : [];
  const other = parts.find((p) => p.type !== "text");
  if (other) throw bad(`POST /ag-ui: the last user message has a ${JSON.stringify(other.type)} part; this server takes text only`);
  const text = typeof content === "string" ? content : parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
  if (text.trim() === "") throw bad("POST /ag-ui: the last user message has no text");
  const { options, permissions } = narrowed({}, context.settings, "POST /ag-ui");
  const log = await context.runner.start({ input: withContext(text, input.context), sessionId: threadId, options, permissions });
  return agUiResponse(log, 0, { threadId, runId, input });
}

/** The input's `context` entries (ambient information for the run), given to the model after the message. */
function withContext(text: string, context: unknown): string {
  if (context === undefined || (Array.isArray(context) && context.length === 0)) return text;
  if (!Array.isArray(context)) throw bad("POST /ag-ui: context must be an array of { description, value }");
  const lines = context.map((entry: unknown, i) => {
    const e = objectOf(entry, `POST /ag-ui: context[${i}]`);
    if (typeof e.description !== "string" || typeof e.value !== "string") throw bad(`POST /ag-ui: context[${i}] must be { description: string, value: string }`);
    return `- ${e.description}: ${e.value}`;
  });
  return `${text}\n\nContext:\n${lines.join("\n")}`;
}

function answersOf(resume: unknown): Record<string, PermissionAnswer> {
  if (!Array.isArray(resume) || resume.length === 0) throw bad("POST /ag-ui: resume must be a non-empty array of { interruptId, status, payload }");
  const answers: Record<string, PermissionAnswer> = {};
  resume.forEach((entry: unknown, i) => {
    const e = objectOf(entry, `POST /ag-ui: resume[${i}]`);
    if (typeof e.interruptId !== "string") throw bad(`POST /ag-ui: resume[${i}].interruptId must be the id of an interrupt (a pending call id)`);
    if (e.status === "cancelled") return void (answers[e.interruptId] = "deny");
    if (e.status !== "resolved") throw bad(`POST /ag-ui: resume[${i}].status must be "resolved" or "cancelled", got ${JSON.stringify(e.status)}`);
    const payload = e.payload;
    if (typeof payload === "string" && ANSWERS.includes(payload)) return void (answers[e.interruptId] = payload as PermissionAnswer);
    if (payload && typeof payload === "object" && typeof (payload as { approved?: unknown }).approved === "boolean") return void (answers[e.interruptId] = (payload as { approved: boolean }).approved ? "allow" : "deny");
    throw bad(`POST /ag-ui: resume[${i}].payload must be "allow", "deny", "allow_always" or { approved: true | false }, got ${JSON.stringify(payload ?? null)}`);
  });
  return answers;
}

function agUiResponse(log: RunLog, from: number, options: Parameters<typeof toAgUiEvents>[1]): Response {
  return streamResponse(async function* (signal) {
    try {
      for await (const event of toAgUiEvents(log.part(from, signal), options)) yield `data: ${JSON.stringify(event)}\n\n`;
    } catch (error) {
      yield `data: ${JSON.stringify({ type: "RUN_ERROR", timestamp: Date.now(), message: (error as Error).message, code: "RUN_FAILED" })}\n\n`;
    }
  }, SSE_HEADERS);
}

