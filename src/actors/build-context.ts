import type { UserContent } from "../models/content.js";
import { planCompaction, SUMMARY_PREFIX, modelSummarizer, type Summarize } from "../compaction/compact.js";
import { estimateContextTokens, estimateTokensOf, type UsageAnchor } from "../compaction/estimate.js";
import { AgentError } from "../errors/agent-error.js";
import { callHook, type AgentHooks } from "../hooks.js";
import type { Message } from "../models/messages.js";
import type { Model } from "../models/model.js";
import type { PermissionPolicy } from "../permissions/types.js";
import { historyForModel, loadTranscript } from "../record/transcript.js";

export interface BuildContextInput {
  /** First build of the run: read the transcript and assemble the first request. */
  first: boolean;
  sessionId: string;
  cwd: string;
  userInput: UserContent;
  systemPrompt?: string;
  /** The run's policy (built with its settings): the session's remembered allow rules are added to it here. */
  policy: PermissionPolicy;
  /** History given by the caller instead of read from the transcript (first build), or the conversation so far. */
  history?: readonly Message[];
  /** The coming turn (model calls made so far + 1). */
  turn: number;
  model: Model;
  hooks: Pick<AgentHooks, "prepareNextTurn" | "shouldStopAfterTurn">;
  summarize?: Summarize;
  contextWindow: number;
  reserveTokens: number;
  keepRecentTokens: number;
  usageAnchor?: UsageAnchor;
  /** After a context overflow: compact now, keeping at most this many recent tokens. */
  compactNow?: number;
  /** Hears about transcript lines ignored as not written by the engine (forged allow rules). */
  warn?: (message: string) => void;
}

export interface BuiltContext {
  /** The conversation from now on (a new list when it changed), system prompt first when there is one. */
  messages?: Message[];
  /** A policy that replaces the run's (a replay's stand-in, which gives each call its recorded verdict). */
  policy?: PermissionPolicy;
  /** `shouldStopAfterTurn` said stop. */
  stop?: boolean;
  model?: Model;
  systemPrompt?: string;
  compaction?: { tokensBefore: number; tokensAfter: number; summary: string };
}

/**
 * build_context: assembles the conversation for the next model call. The first time, from the session's transcript
 * (when continuing one), the system prompt and the new user message. Before later calls: `shouldStopAfterTurn`,
 * `prepareNextTurn`, and compaction when the estimate exceeds contextWindow − reserveTokens.
 */
export async function buildContext(input: BuildContextInput, signal: AbortSignal): Promise<BuiltContext> {
  if (input.first) {
    const loaded = input.history
      ? { messages: [...input.history], allowRules: [] as string[] }
      : loadTranscript(input.cwd, input.sessionId, input.warn);
    const messages: Message[] = [];
    if (input.systemPrompt) messages.push({ role: "system", content: input.systemPrompt });
    for (const m of historyForModel(loaded.messages)) if (m.role !== "system") messages.push(m);
    // A fork given a conversation and no new request goes on from the conversation as it stood.
    if (!(input.history && input.userInput === "")) messages.push({ role: "user", content: input.userInput });
    input.policy.addSessionRules(loaded.allowRules);
    // Every later decision of the run is synchronous: the bash parser must be there before the first one.
    await input.policy.ready;
    const built: BuiltContext = { messages };
    const compaction = await compactIfNeeded(input, messages, signal);
    return compaction ? { ...built, ...compaction } : built;
  }
  const conversation = input.history ?? [];
  const out: BuiltContext = {};
  const view = { turn: input.turn, messages: conversation };
  if (input.hooks.shouldStopAfterTurn) {
    const stop = await callHook("shouldStopAfterTurn", () => input.hooks.shouldStopAfterTurn!({ turn: input.turn - 1, messages: conversation }));
    if (stop === true) return { stop: true };
  }
  let messages: Message[] | undefined;
  if (input.hooks.prepareNextTurn) {
    const prepared = await callHook("prepareNextTurn", () => input.hooks.prepareNextTurn!(view));
    if (prepared) {
      if (prepared.model) out.model = prepared.model;
      if (prepared.systemPrompt !== undefined) out.systemPrompt = prepared.systemPrompt;
      if (prepared.messages || prepared.systemPrompt !== undefined) {
        const body = (prepared.messages ?? conversation).filter((m) => m.role !== "system");
        const system = prepared.systemPrompt ?? (conversation[0]?.role === "system" ? conversation[0].content : undefined);
        messages = system ? [{ role: "system", content: system }, ...body] : [...body];
      }
    }
  }
  const current = messages ?? conversation;
  const compaction = await compactIfNeeded({ ...input, model: out.model ?? input.model }, current, signal, messages === undefined ? input.usageAnchor : undefined);
  if (compaction) return { ...out, ...compaction };
  if (messages) out.messages = messages;
  return out;
}

async function compactIfNeeded(
  input: BuildContextInput,
  messages: readonly Message[],
  signal: AbortSignal,
  anchor: UsageAnchor | undefined = input.usageAnchor,
): Promise<Pick<BuiltContext, "messages" | "compaction"> | undefined> {
  const tokensBefore = estimateContextTokens(messages, anchor);
  const forced = input.compactNow !== undefined;
  if (!forced && (input.contextWindow <= 0 || tokensBefore <= input.contextWindow - input.reserveTokens)) return undefined;
  const system = messages[0]?.role === "system" ? messages[0] : undefined;
  const body = system ? messages.slice(1) : [...messages];
  const keep = forced ? Math.min(input.keepRecentTokens, input.compactNow!) : input.keepRecentTokens;
  const plan = planCompaction(body, keep);
  if (!plan) return undefined;
  const summarize = input.summarize ?? modelSummarizer(input.model, input.sessionId);
  const summary = await callHook("summarize", () => summarize(plan.older, { signal }));
  if (typeof summary !== "string" || summary.trim() === "") {
    throw new AgentError("HOOK_FAILED", "hook summarize failed: it returned no text");
  }
  const compacted: Message[] = [...(system ? [system] : []), { role: "user", content: SUMMARY_PREFIX + summary }, ...plan.recent];
  return { messages: compacted, compaction: { tokensBefore, tokensAfter: estimateTokensOf(compacted), summary } };
}
