import { AgentError, toAgentError } from "../errors/agent-error.js";
import { callHook, type AgentHooks } from "../hooks.js";
import type { Model, ModelRequest, ModelResponse } from "../models/model.js";
import type { Report } from "./report.js";

export interface CallModelInput {
  model: Model;
  request: ModelRequest;
  transformContext?: AgentHooks["transformContext"];
  /** Waits while the run's caller lags behind its events (EngineDeps.pace). */
  pace?: (signal: AbortSignal) => Promise<void> | undefined;
}

/**
 * One model call. `transformContext` shapes what is sent (never the stored history); text, thinking and retries
 * stream to the engine as they arrive; the call resolves with the model's response. Its signal aborts when the engine
 * leaves the model state (abort, timeout), which stops the request.
 */
export async function callModel(input: CallModelInput, signal: AbortSignal, report: Report): Promise<ModelResponse> {
  const pace = input.pace;
  // The caller lags too far behind the run's events: the next request waits for it (its result would only queue).
  const caughtUp = pace?.(signal);
  if (caughtUp) {
    await caughtUp;
    if (signal.aborted) throw new AgentError("USER_ABORT", "the model call was aborted", { cause: signal.reason });
  }
  let request = input.request;
  if (input.transformContext) {
    const transform = input.transformContext;
    const messages = await callHook("transformContext", () => transform(request.messages));
    if (!Array.isArray(messages)) throw new AgentError("HOOK_FAILED", "hook transformContext failed: it must return an array of messages");
    request = { ...request, messages };
  }
  try {
    for await (const event of input.model.stream(request, { signal })) {
      // The engine left the model state (abort, timeout) while this event was on its way: the call is over, and
      // nothing more is relayed to a machine that has moved on.
      if (signal.aborted) throw signal.reason;
      if (event.type === "response") return event.response;
      const behind = pace?.(signal);
      if (behind) {
        await behind;
        if (signal.aborted) throw signal.reason;
      }
      report({ type: "model.stream", event });
    }
  } catch (error) {
    if (signal.aborted) throw new AgentError("USER_ABORT", "the model call was aborted", { cause: error });
    throw toAgentError(error, "MODEL_ERROR");
  }
  throw new AgentError("MODEL_ERROR", `model "${input.model.name}" ended its stream without a response`);
}
