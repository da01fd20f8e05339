import type { RawToolCall } from "../model.js";
import { isWireObject, type WireObject } from "./wire-types.js";

/** Tool-call fields some servers need echoed back verbatim (Gemini's thought signature). */
const CALL_METADATA_FIELDS = ["extra_content", "thought_signature"] as const;

interface PendingCall {
  providerId?: string;
  name: string;
  text: string;
  objectArguments?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/**
 * Assembles tool calls from streamed `tool_calls` deltas as real servers send them (see the openai-wire fixtures):
 * calls are keyed by `index` when there is one, but a new non-empty id or a different name starts a new call;
 * the name is the first non-empty one and never concatenated; ids are kept only when non-empty; `arguments` may come
 * whole, split anywhere, as `""`, or as an object.
 */
export class ToolCallAssembler {
  private readonly calls: PendingCall[] = [];
  private readonly byIndex = new Map<number, PendingCall>();

  add(delta: unknown): void {
    if (!isWireObject(delta)) return;
    const fn: WireObject = isWireObject(delta.function) ? delta.function : {};
    const index = typeof delta.index === "number" && Number.isInteger(delta.index) ? delta.index : undefined;
    const id = nonEmptyString(delta.id);
    const name = nonEmptyString(fn.name);
    const args = fn.arguments;
    const argText = typeof args === "string" ? args : "";
    const argObject = isWireObject(args) ? args : undefined;

    let call: PendingCall | undefined;
    if (index !== undefined) call = this.byIndex.get(index);
    else call = (id !== undefined ? this.calls.find((c) => c.providerId === id) : undefined) ?? this.calls.at(-1);

    if (!call || this.startsNewCall(call, id, name, argText)) {
      const substantive = id !== undefined || name !== undefined || argText !== "" || argObject !== undefined;
      // A trailing `{"arguments": ""}` with nothing to attach to is noise, not a call.
      if (!substantive) return;
      call = { name: "", text: "" };
      this.calls.push(call);
      if (index !== undefined) this.byIndex.set(index, call);
    }

    if (id !== undefined && call.providerId === undefined) call.providerId = id;
    if (name !== undefined && call.name === "") call.name = name;
    // A server repeating a finished call's whole arguments (same id or index) is not sending more of them.
    const repeat = argText !== "" && isCompleteJson(call.text) && argText.trim() === call.text.trim();
    if (!repeat) call.text += argText;
    if (argObject) call.objectArguments = { ...call.objectArguments, ...argObject };
    for (const field of CALL_METADATA_FIELDS) {
      if (delta[field] !== undefined && delta[field] !== null) call.metadata = { ...call.metadata, [field]: delta[field] };
    }
  }

  private startsNewCall(call: PendingCall, id: string | undefined, name: string | undefined, argText: string): boolean {
    if (id !== undefined && call.providerId !== undefined && id !== call.providerId) return true;
    if (name !== undefined && call.name !== "" && name !== call.name) return true;
    // The same name again with fresh arguments after a complete call: a second call to the same tool
    // from a server that numbers every call 0 and sends no ids.
    if (name !== undefined && id === undefined && argText.trimStart().startsWith("{") && isCompleteJson(call.text)) {
      return true;
    }
    return false;
  }

  get count(): number {
    return this.calls.length;
  }

  result(): RawToolCall[] {
    return this.calls.map((call) => ({
      ...(call.providerId !== undefined ? { providerId: call.providerId } : {}),
      name: call.name,
      arguments: finalArguments(call),
      ...(call.metadata ? { providerMetadata: call.metadata } : {}),
    }));
  }
}

function finalArguments(call: PendingCall): string | Record<string, unknown> {
  const text = call.text.trim();
  if (text === "") return call.objectArguments ?? "{}";
  // Some servers double-encode: a JSON string whose content is the JSON object.
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "string" && isCompleteJson(parsed) && parsed.trim().startsWith("{")) return parsed.trim();
  } catch {
    // Not JSON: the engine reports it to the model.
  }
  return call.text;
}

function isCompleteJson(text: string): boolean {
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
