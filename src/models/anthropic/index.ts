export { anthropicModel } from "./anthropic-model.js";
export type { AnthropicModelOptions, AnthropicEnvironment } from "./options.js";
