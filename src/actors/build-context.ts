import { fromPromise } from "xstate";
import type { Message } from "../models/messages.js";
import { createPermissionPolicy } from "../permissions/policy.js";
import type { PermissionOptions, PermissionPolicy } from "../permissions/types.js";
import { historyForModel, loadTranscript } from "../trace/transcript.js";

export interface BuildContextInput {
  sessionId: string;
  cwd: string;
  userInput: string;
  systemPrompt?: string;
  permissions: PermissionOptions;
  /** History given by the caller instead of read from the transcript. */
  history?: readonly Message[];
}

export interface BuiltContext {
  /** What the model sees: system prompt, earlier conversation, the new user message. */
  messages: Message[];
  policy: PermissionPolicy;
}

/** Reads the session's transcript (when continuing one) and assembles the conversation for the first model call. */
export async function buildContext(input: BuildContextInput): Promise<BuiltContext> {
  const loaded = input.history
    ? { messages: [...input.history], allowRules: [] as string[] }
    : loadTranscript(input.cwd, input.sessionId);
  const messages: Message[] = [];
  if (input.systemPrompt) messages.push({ role: "system", content: input.systemPrompt });
  for (const m of historyForModel(loaded.messages)) if (m.role !== "system") messages.push(m);
  messages.push({ role: "user", content: input.userInput });
  return { messages, policy: createPermissionPolicy(input.permissions, loaded.allowRules) };
}

export const buildContextActor = fromPromise<BuiltContext, BuildContextInput>(({ input }) => buildContext(input));
