/** The states of the engine (the seed's ten EngineState values, and validate_output for runs with `output`): its only atomic and final states. */
export const ENGINE_STATES = [
  "build_context",
  "call_model",
  "stream_text",
  "parse_tool_call",
  "validate_tool",
  "ask_permission",
  "execute_tool",
  "append_tool_result",
  "recover",
  "validate_output",
  "done",
] as const;

export type EngineStateName = (typeof ENGINE_STATES)[number];
