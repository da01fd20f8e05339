import { randomUUID } from "../../util/node-crypto.js";
import { AgentError } from "../../errors/agent-error.js";
import type { AssistantMessage, AssistantToolCall } from "../../models/messages.js";
import type { RawToolCall } from "../../models/model.js";
import type { CallRecord, EngineContext } from "../context.js";
import { stableJson } from "../../util/stable-json.js";
import { replaceRecords } from "./records.js";

/** Engine-owned ids: a server's "0" or "" never collides across turns or sessions. */
function newToolCallId(): string {
  // The UUID's first 20 hex digits, its dashes left out by slicing around them (8-4-4-4-12): a regex replace per
  // call was 0.6 % of a step's profile.
  const id = randomUUID();
  return `call_${id.slice(0, 8)}${id.slice(9, 13)}${id.slice(14, 18)}${id.slice(19, 23)}`;
}

/** parse_tool_call: raw calls → ToolCalls. Arguments that are not JSON, or a truncated response, become errors. */
export function parseToolCalls(context: EngineContext): Partial<EngineContext> {
  const response = context.call.response!;
  const truncated = response.finishReason === "length";
  const newId = context.deps.newCallId ?? newToolCallId;
  const batch: CallRecord[] = response.toolCalls.map((raw) => parseOne(raw, context.run.sessionId, truncated, newId));
  // Built by assignment rather than by spreading optional parts: no empty object per call and step (the same keys
  // in the same order, so the conversation serialises as before).
  const toolCalls: AssistantToolCall[] = [];
  for (const { call, raw } of batch) {
    const toolCall: AssistantToolCall = { id: call.id, name: call.name, input: call.input };
    if (typeof raw.arguments === "string" && (call.input === undefined || JSON.stringify(call.input) !== raw.arguments)) toolCall.rawArguments = raw.arguments;
    if (raw.providerId !== undefined) toolCall.providerId = raw.providerId;
    if (raw.providerMetadata !== undefined) toolCall.providerMetadata = raw.providerMetadata;
    toolCalls.push(toolCall);
  }
  const message: AssistantMessage = { role: "assistant", content: response.text, toolCalls };
  if (response.thinking) message.thinking = response.thinking;
  if (response.providerMetadata) message.providerMetadata = response.providerMetadata;
  return { messages: context.messages.append(message), batch, batchState: { ...context.batchState, open: true, hitToolLimit: false } };
}

function parseOne(raw: RawToolCall, sessionId: string, truncated: boolean, newId: () => string): CallRecord {
  const id = newId();
  let input: unknown;
  let error: AgentError | undefined;
  if (typeof raw.arguments === "string") {
    const text = raw.arguments.trim();
    try {
      input = text === "" ? {} : (JSON.parse(text) as unknown);
    } catch (e) {
      input = raw.arguments;
      error = new AgentError(
        "TOOL_INPUT_INVALID",
        `the arguments of ${raw.name} are not valid JSON (${(e as Error).message}); send a JSON object matching the tool's schema`,
      );
    }
  } else {
    input = raw.arguments;
  }
  if (truncated) {
    error = new AgentError(
      "TOOL_CALL_TRUNCATED",
      `not run: the response was cut off by the output token limit (finish reason "length"), so the arguments of ${raw.name} may be incomplete; call it again, with shorter arguments if needed`,
    );
  }
  const record: CallRecord = { call: { id, name: raw.name, input, sessionId }, raw, status: error ? "invalid" : "pending" };
  if (error) record.error = error;
  return record;
}

/**
 * validate_tool: each pending call's tool must exist and its input match the schema (coerced values kept).
 * Calls past the run's remaining tool-call budget are marked `over_limit`.
 */
export function validateToolCalls(context: EngineContext): Partial<EngineContext> {
  const tools = context.deps.tools;
  let budget = context.run.maxToolCalls - context.toolCallCount;
  let hitLimit = false;
  let repeat = context.batchState.repeat;
  const maxRepeated = context.loop.maxRepeatedCalls;
  const refused = (record: CallRecord, error: AgentError, fatal = false): CallRecord => {
    const next: CallRecord = { ...record, status: "invalid", error };
    if (fatal) next.fatal = true;
    return next;
  };
  const batch = replaceRecords(context.batch, (record) => {
    if (record.status !== "pending") return record;
    const tool = tools.get(record.call.name);
    if (!tool) {
      const available = [...tools.keys()];
      return refused(record, new AgentError("TOOL_NOT_FOUND", `unknown tool "${record.call.name}". Available tools: ${available.length ? available.join(", ") : "(none)"}`));
    }
    const check = tool.validateInput(record.call.input);
    if (!check.ok) {
      if (check.fatal) return refused(record, new AgentError("INVALID_TOOL", check.message), true);
      return refused(record, new AgentError("TOOL_INPUT_INVALID", `invalid input for ${tool.name}: ${check.message}`));
    }
    const validated: CallRecord = { ...record, call: { ...record.call, input: check.value } };
    // The loop guard: the same call (name and input) may run maxRepeatedCalls times in a row.
    const key = `${tool.name} ${stableJson(check.value)}`;
    repeat = key === repeat.key ? { ...repeat, count: repeat.count + 1 } : { key, count: 1, refused: false };
    if (repeat.count > maxRepeated) {
      if (repeat.refused) {
        const message = `stopped: the model kept repeating the same ${tool.name} call after being told not to (maxRepeatedCalls = ${maxRepeated})`;
        return refused(validated, new AgentError("REPEATED_CALL", message), true);
      }
      repeat = { ...repeat, refused: true };
      const message = `not run: this exact ${tool.name} call was already made ${maxRepeated} times in a row; its result will not change. Try something different`;
      return refused(validated, new AgentError("REPEATED_CALL", message));
    }
    if (budget <= 0) {
      hitLimit = true;
      return { ...validated, status: "over_limit" };
    }
    budget--;
    return validated;
  });
  return { batch, batchState: { ...context.batchState, hitToolLimit: hitLimit, repeat } };
}

/** What the model is told for a call refused before it ran. */
export function errorResultText(error: AgentError): string {
  switch (error.code) {
    case "TOOL_NOT_FOUND":
      return `Error: ${error.message}. Use one of the available tools.`;
    case "TOOL_INPUT_INVALID":
      return `Error: ${error.message}. Try again with valid input.`;
    case "TOOL_CALL_TRUNCATED":
    case "REPEATED_CALL":
      return `Error: ${error.message}.`;
    default:
      return `Error: ${error.message}`;
  }
}
