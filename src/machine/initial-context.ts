import { randomUUID } from "../util/node-crypto.js";
import { emptyUsage } from "../events.js";
import type { EngineContext, EngineInput } from "./context.js";
import { Conversation } from "./conversation.js";

/** The machine's context as a run starts: a new run from its input, a resumed one from where it stopped (docs/durable.md). */
export function initialContext(input: EngineInput): EngineContext {
  const startedAt = input.startedAt ?? Date.now();
  const resume = input.resume;
  return {
    run: {
      sessionId: input.sessionId,
      userInput: input.userInput,
      cwd: input.cwd,
      ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
      maxTurns: input.maxTurns,
      maxToolCalls: input.maxToolCalls,
      timeoutMs: input.timeoutMs,
      startedAt,
      deadline: startedAt + input.timeoutMs,
      ...(input.traceContext ? { traceContext: input.traceContext } : {}),
      ...(input.resumedFrom ? { resumedFrom: input.resumedFrom } : {}),
    },
    loop: input.loop,
    deps: input.deps,
    turn: resume?.turn ?? 0,
    toolCallCount: resume?.toolCallCount ?? 0,
    usage: resume ? { ...resume.usage } : emptyUsage(),
    messages: Conversation.of(input.history),
    batch: resume ? resume.batch : [],
    batchState: resume ? resume.batchState : { open: false, hitToolLimit: false, repeat: { key: "", count: 0, refused: false } },
    call: {
      streamingText: "",
      contextBuilt: resume !== undefined,
      retrying: false,
      modelErrorAttempts: resume?.call.modelErrorAttempts ?? 0,
      overflowCompacted: resume?.call.overflowCompacted ?? false,
      ...(resume?.call.usageAnchor ? { usageAnchor: resume.call.usageAnchor } : {}),
    },
    inbox: { ...(input.inbox ?? { steering: [], followUp: [] }), claimed: [] },
    outcome: { finalText: "" },
    durable: {
      runId: input.runId ?? randomUUID(),
      ...(resume ? { resumeAt: resume.at } : {}),
      ...(resume ? { answers: resume.answers, ...(resume.answeredBy !== undefined ? { answeredBy: resume.answeredBy } : {}) } : {}),
    },
  };
}
