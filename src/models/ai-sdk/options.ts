import { describe, optionChecks } from "../option-checks.js";

/**
 * The part of an AI SDK `LanguageModel` (specification v3, `@ai-sdk/provider` 3.x, or v2) that statecraft uses,
 * written out here so that `import("statecraft")` needs no AI SDK package, not even for its types. Any provider
 * package's model fits it: `google("gemini-2.5-flash")`, `anthropic("claude-sonnet-4-5")`, `bedrock(...)`, ...
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: "v3" | "v2";
  readonly provider: string;
  readonly modelId: string;
  // A method (not a property), so any provider's own, narrower call options type still fits.
  doStream(options: AiSdkCallOptions): PromiseLike<{ stream: ReadableStream<unknown> }>;
}

/**
 * The call options statecraft passes to `doStream`, in the specification's names. Each field is as wide as the
 * specification's own (a provider's model must fit `AiSdkLanguageModel`); statecraft sends the shapes noted.
 */
export interface AiSdkCallOptions {
  /** The specification's messages (`LanguageModelV3Prompt`). */
  prompt: readonly unknown[];
  /** Function tools: `{ type: "function", name, description, inputSchema }`. */
  tools?: readonly unknown[];
  /** `{ type: "auto" }` beside tools. */
  toolChoice?: { type: string; toolName?: string };
  maxOutputTokens?: number;
  temperature?: number;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  providerOptions?: Record<string, Record<string, unknown>>;
  responseFormat?: { type: string; schema?: unknown; name?: string; description?: string };
}

/** Options of `aiSdkModel()`. */
export interface AiSdkModelOptions {
  /** The name for traces and logs. Default: the model's `modelId`. */
  name?: string;
  /** The model's context window in tokens, exposed as `Model.contextWindow` (compaction uses it). */
  contextWindow?: number;
  /** Output token limit of one model call (`maxOutputTokens`). */
  maxTokens?: number;
  temperature?: number;
  /** Provider options passed with every call, e.g. `{ anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } }`. */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Extra HTTP headers for every call. */
  headers?: Record<string, string>;
  /** Retries after the first attempt for retryable failures (the provider's `isRetryable`, dropped connections). Default 2. */
  maxRetries?: number;
  /** First backoff delay between retries; doubled each retry, with jitter. Default 500. */
  retryBaseDelayMs?: number;
  /** Cap on any delay between retries, including one asked for by `retry-after`. Default 60 000. */
  maxRetryDelayMs?: number;
}

export interface ResolvedAiSdkConfig {
  name: string;
  contextWindow?: number;
  maxTokens?: number;
  temperature?: number;
  providerOptions?: Record<string, Record<string, unknown>>;
  headers: Record<string, string>;
  maxRetries: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
}

const { invalid, integer } = optionChecks("aiSdkModel");

const KNOWN = ["name", "contextWindow", "maxTokens", "temperature", "providerOptions", "headers", "maxRetries", "retryBaseDelayMs", "maxRetryDelayMs"];

/** Checks the model and the options; anything wrong throws `INVALID_OPTIONS` saying what to pass instead. */
export function resolveAiSdkConfig(model: unknown, options: AiSdkModelOptions = {}): ResolvedAiSdkConfig {
  checkModel(model);
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw invalid(`options must be an object, got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw invalid(`unknown option "${key}"; known options: ${KNOWN.join(", ")}`);
  }
  const name = options.name ?? model.modelId;
  if (typeof name !== "string" || name.trim() === "") throw invalid(`name must be a non-empty string, got ${describe(name)}`);
  for (const key of ["providerOptions", "headers"] as const) {
    const value = options[key];
    if (value !== undefined && (value === null || typeof value !== "object" || Array.isArray(value))) throw invalid(`${key} must be an object, got ${describe(value)}`);
  }
  if (options.temperature !== undefined && (typeof options.temperature !== "number" || !Number.isFinite(options.temperature))) {
    throw invalid(`temperature must be a number, got ${describe(options.temperature)}`);
  }
  return {
    name,
    ...(options.contextWindow !== undefined ? { contextWindow: integer("contextWindow", options.contextWindow, 0, 1) } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: integer("maxTokens", options.maxTokens, 0, 1) } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.providerOptions !== undefined ? { providerOptions: options.providerOptions } : {}),
    headers: { ...(options.headers ?? {}) },
    maxRetries: integer("maxRetries", options.maxRetries, 2, 0),
    retryBaseDelayMs: integer("retryBaseDelayMs", options.retryBaseDelayMs, 500, 0),
    maxRetryDelayMs: integer("maxRetryDelayMs", options.maxRetryDelayMs, 60_000, 0),
  };
}

function checkModel(model: unknown): asserts model is AiSdkLanguageModel {
  if (model === null || typeof model !== "object") {
    throw invalid(`expected an AI SDK language model such as google("gemini-2.5-flash") from @ai-sdk/google, got ${describe(model)}`);
  }
  const m = model as Partial<AiSdkLanguageModel>;
  if (m.specificationVersion !== "v3" && m.specificationVersion !== "v2") {
    throw invalid(
      `the model implements specification ${describe(m.specificationVersion)}; statecraft supports "v3" (AI SDK 6 provider packages, @ai-sdk/provider 3.x) and "v2" (AI SDK 5). ` +
        `A string model id (AI Gateway) is not a model: pass the provider's model object`,
    );
  }
  if (typeof m.doStream !== "function") throw invalid(`the model has no doStream method: pass a language model of an AI SDK provider package`);
  if (typeof m.modelId !== "string") throw invalid(`the model has no modelId`);
}
