export { openaiModel } from "./openai-model.js";
export type { OpenAIModelOptions, OpenAIEnvironment } from "./options.js";
// Helpers the other providers share (retries, ports, overflow wording, fetch observation): one copy of each.
export { retryDelayMs, retryAfterMs, sleep } from "./retry-policy.js";
export { blockedPort, blockedPortMessage } from "./blocked-ports.js";
export { isContextOverflow } from "./context-overflow.js";
export { observedFetch } from "./observed-fetch.js";
export { mapToolCallIds } from "./tool-id-mapping.js";
