import { AgentError } from "./errors/agent-error.js";
import type { Message, ToolCall, ToolResult } from "./models/messages.js";
import type { Model } from "./models/model.js";

/** What `beforeToolCall` may answer: nothing (go on), a block, or edited input (validated again). */
export type BeforeToolCallResult = void | undefined | { block: true; reason: string } | { input: unknown };

/** What `prepareNextTurn` may answer: nothing, or what holds from the coming model call on. */
export type PrepareNextTurnResult = void | undefined | { model?: Model; systemPrompt?: string; messages?: Message[] };

/** What `onModelError` may answer (seed 002's request-error actions). No answer means `abort`. */
export type ModelErrorAction = { action: "retry"; delayMs?: number } | { action: "abort" } | { action: "continue" };

/**
 * Hooks into the loop, each run from a named state of the machine (docs/loop.md has the contracts).
 * A throwing `beforeToolCall`/`afterToolCall` gives that call an error result; any other throwing hook ends the run
 * `model_error` with `error.code` `HOOK_FAILED` and the hook's message.
 */
export interface AgentHooks<Call extends ToolCall = ToolCall> {
  // The two call hooks are methods (checked bivariantly): hooks typed for a run's own tools (`Call`) stay assignable
  // where the engine holds them as taking any ToolCall.
  /** Before every model call (call_model): shapes what is sent, never the stored history. */
  transformContext?: (messages: readonly Message[]) => Message[] | Promise<Message[]>;
  /** After validation, before permission (ask_permission): block the call, or edit its input. */
  beforeToolCall?(call: Call): BeforeToolCallResult | Promise<BeforeToolCallResult>;
  /** After a call produced its result (execute_tool): replace what the model sees. */
  afterToolCall?(call: Call, result: ToolResult): void | undefined | ToolResult | Promise<void | undefined | ToolResult>;
  /** Before every model call after the first (build_context); `turn` is the coming turn. What it returns holds from then on. */
  prepareNextTurn?: (turn: { turn: number; messages: readonly Message[] }) => PrepareNextTurnResult | Promise<PrepareNextTurnResult>;
  /** After each turn's whole tool batch (build_context): `true` ends the run `final_answer` without another model call. */
  shouldStopAfterTurn?: (turn: { turn: number; messages: readonly Message[] }) => boolean | Promise<boolean>;
  /** After the provider's own retries failed (recover): retry the same request, abort, or continue with a note. */
  onModelError?: (error: AgentError, attempt: number) => ModelErrorAction | void | undefined | Promise<ModelErrorAction | void | undefined>;
}

export const HOOK_NAMES = [
  "transformContext",
  "beforeToolCall",
  "afterToolCall",
  "prepareNextTurn",
  "shouldStopAfterTurn",
  "onModelError",
] as const satisfies ReadonlyArray<keyof AgentHooks>;

/** Runs a hook; whatever it throws becomes `HOOK_FAILED` naming the hook. */
export async function callHook<T>(name: keyof AgentHooks | "summarize", run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new AgentError("HOOK_FAILED", `hook ${name} failed: ${message}`, { cause: error });
  }
}
