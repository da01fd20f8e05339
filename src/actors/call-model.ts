import { fromPromise, type AnyActorRef } from "xstate";
import { AgentError, toAgentError } from "../errors/agent-error.js";
import type { Model, ModelRequest, ModelResponse } from "../models/model.js";

export interface CallModelInput {
  model: Model;
  request: ModelRequest;
  /** The engine: streaming events are sent to it as they arrive (an emit in a child is not seen by the parent). */
  parent: AnyActorRef;
}

/**
 * One model call. Streams text, thinking and retries to the engine and resolves with the model's response.
 * The actor's signal aborts when the engine leaves the model state (abort, timeout), which stops the request.
 */
export const callModelActor = fromPromise<ModelResponse, CallModelInput>(async ({ input, signal }) => {
  try {
    for await (const event of input.model.stream(input.request, { signal })) {
      if (event.type === "response") return event.response;
      input.parent.send({ type: "model.stream", event });
    }
  } catch (error) {
    if (signal.aborted) throw new AgentError("USER_ABORT", "the model call was aborted", { cause: error });
    throw toAgentError(error, "MODEL_ERROR");
  }
  throw new AgentError("MODEL_ERROR", `model "${input.model.name}" ended its stream without a response`);
});
