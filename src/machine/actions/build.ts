import type { BuiltContext } from "../../actors/build-context.js";
import type { EngineContext } from "../context.js";
import { Conversation } from "../conversation.js";

/** What build_context produced holds from now on: the conversation, the policy, a new model or system prompt. */
export function storeBuiltContext(context: EngineContext, built: BuiltContext): Partial<EngineContext> {
  const call = { ...context.call, contextBuilt: true, compactNow: undefined, compaction: built.compaction };
  const update: Partial<EngineContext> = { call };
  if (built.messages) {
    update.messages = Conversation.of(built.messages);
    // A new list: the last known usage no longer measures it.
    call.usageAnchor = undefined;
  }
  if (built.policy || built.model) {
    update.deps = { ...context.deps, ...(built.policy ? { policy: built.policy } : {}), ...(built.model ? { model: built.model } : {}) };
  }
  if (built.systemPrompt !== undefined) update.run = { ...context.run, systemPrompt: built.systemPrompt };
  return update;
}
