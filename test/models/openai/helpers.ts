import { AgentError } from "../../../src/errors/agent-error.js";
import type { Message } from "../../../src/models/messages.js";
import type { Model, ModelRequest, ModelResponse, ModelStreamEvent, RawToolCall, ToolSpec } from "../../../src/models/model.js";

export const WEATHER_TOOL: ToolSpec = {
  name: "weather",
  description: "Current weather for a location",
  inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

export function request(messages?: Message[], tools: ToolSpec[] = [WEATHER_TOOL]): ModelRequest {
  return {
    messages: messages ?? [
      { role: "system", content: "You are a test." },
      { role: "user", content: "What is the weather in San Francisco?" },
    ],
    tools,
    sessionId: "session-test",
    turn: 0,
  };
}

export interface Collected {
  events: ModelStreamEvent[];
  response?: ModelResponse;
  error?: unknown;
  text: string;
  thinking: string;
}

/** Runs one model call to its end, keeping every event and the error it threw, if any. */
export async function collect(model: Model, req: ModelRequest = request(), signal: AbortSignal = new AbortController().signal): Promise<Collected> {
  const events: ModelStreamEvent[] = [];
  let error: unknown;
  try {
    for await (const event of model.stream(req, { signal })) events.push(event);
  } catch (thrown) {
    error = thrown;
  }
  const last = events.at(-1);
  return {
    events,
    ...(last?.type === "response" ? { response: last.response } : {}),
    ...(error !== undefined ? { error } : {}),
    text: events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join(""),
    thinking: events.flatMap((e) => (e.type === "thinking_delta" ? [e.text] : [])).join(""),
  };
}

/** The calls with their arguments parsed, as the engine will see them. */
export function parsedCalls(calls: readonly RawToolCall[]): { name: string; args: unknown; providerId?: string }[] {
  return calls.map((call) => ({
    name: call.name,
    args: typeof call.arguments === "string" ? (JSON.parse(call.arguments) as unknown) : call.arguments,
    ...(call.providerId !== undefined ? { providerId: call.providerId } : {}),
  }));
}

export function asAgentError(error: unknown): AgentError {
  if (!(error instanceof AgentError)) throw new Error(`expected an AgentError, got ${String(error)}`);
  return error;
}
