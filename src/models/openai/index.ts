export { openaiModel } from "./openai-model.js";
export type { OpenAIModelOptions, OpenAIEnvironment } from "./options.js";
