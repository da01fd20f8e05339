export { aiSdkModel } from "./ai-sdk-model.js";
export type { AiSdkLanguageModel, AiSdkModelOptions, AiSdkCallOptions } from "./options.js";
