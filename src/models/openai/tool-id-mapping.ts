import type { Message } from "../messages.js";

/**
 * Which id each tool call carries on the wire. The engine owns tool-call ids (a server's "0" or "" must never
 * collide across turns), but some servers check the format of ids they issued, so a call goes back with the
 * server's own id when that id is unique in the whole conversation, and with the engine's id otherwise.
 * Returns a map from engine id to wire id; tool results use it too, so calls and results always agree.
 */
export function mapToolCallIds(messages: readonly Message[]): Map<string, string> {
  const calls: { id: string; providerId?: string }[] = [];
  for (const message of messages) {
    if (message.role === "assistant" && message.toolCalls) calls.push(...message.toolCalls);
  }

  const providerIdCounts = new Map<string, number>();
  for (const call of calls) {
    if (call.providerId) providerIdCounts.set(call.providerId, (providerIdCounts.get(call.providerId) ?? 0) + 1);
  }
  const engineIds = new Set(calls.map((call) => call.id));

  const wireIds = new Map<string, string>();
  const used = new Set<string>();
  for (const call of calls) {
    if (wireIds.has(call.id)) continue;
    const provider = call.providerId;
    const providerUsable =
      provider !== undefined &&
      provider !== "" &&
      providerIdCounts.get(provider) === 1 &&
      // A server id equal to another call's engine id would make two calls share a wire id.
      (!engineIds.has(provider) || provider === call.id);
    const wireId = providerUsable && !used.has(provider) ? provider : call.id;
    wireIds.set(call.id, wireId);
    used.add(wireId);
  }
  return wireIds;
}
