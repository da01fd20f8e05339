import { resolveApiKey, resolveBaseUrl } from "../endpoint-options.js";
import { describe, nonEmpty, optionChecks } from "../option-checks.js";

/** Options of `openaiModel()`. Every field is optional when the environment supplies it. */
export interface OpenAIModelOptions {
  /** The model name, e.g. "gpt-4o-mini", "qwen2.5:7b". Default: `STATECRAFT_MODEL`. */
  model?: string;
  /** Base URL of the Chat Completions API, ending in `/v1`. Default: `OPENAI_BASE_URL`, else https://api.openai.com/v1. */
  baseURL?: string;
  /** API key. Default: `OPENAI_API_KEY`; without one a placeholder is sent (local servers need none). */
  apiKey?: string;
  /** Retries after the first attempt for retryable failures (429, 408, 409, 5xx, dropped or idle streams). Default 2. */
  maxRetries?: number;
  /** Time limit of one attempt, from sending the request to the end of the stream. Default 600 000 (10 minutes). */
  timeoutMs?: number;
  /** An attempt fails (retryably) when the server sends nothing for this long. Default 60 000. */
  idleTimeoutMs?: number;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  temperature?: number;
  /** Output token limit of one model call (`max_completion_tokens` for api.openai.com, `max_tokens` elsewhere). */
  maxTokens?: number;
  /** Whether the model may call several tools in one response (sent only when tools are offered). */
  parallelToolCalls?: boolean;
  /**
   * How a run's `output` schema is asked for: `"json_schema"` (default) sends `response_format: { type:
   * "json_schema" }` for an object schema (strict when the schema allows it); `"instructions"` puts the schema in the
   * system message instead, for servers that refuse `response_format`. Arrays and primitives always go as instructions.
   */
  structuredOutput?: "json_schema" | "instructions";
  /** The model's context window in tokens, exposed as `Model.contextWindow` (compaction uses it). */
  contextWindow?: number;
  /** Extra fields merged into every request body (e.g. `{ top_p: 0.9 }`, `{ reasoning_effort: "low" }`). */
  extraBody?: Record<string, unknown>;
  /** First backoff delay between retries; doubled each retry, with jitter. Default 500. */
  retryBaseDelayMs?: number;
  /** Cap on any delay between retries, including one asked for by `Retry-After`. Default 60 000. */
  maxRetryDelayMs?: number;
}

/** The environment variables `openaiModel()` reads. */
export interface OpenAIEnvironment {
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  STATECRAFT_MODEL?: string;
}

/** Options with every default applied and every value checked. */
export interface ResolvedOpenAIConfig {
  model: string;
  baseURL: string;
  /** The key to send, or the placeholder when none was given. Never put into messages. */
  apiKey: string;
  /** Whether a real key was configured (for actionable 401 messages). */
  apiKeySource: "option" | "env" | "none";
  maxRetries: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  headers: Record<string, string>;
  temperature?: number;
  maxTokens?: number;
  parallelToolCalls?: boolean;
  structuredOutput: "json_schema" | "instructions";
  contextWindow?: number;
  extraBody: Record<string, unknown>;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
export const DEFAULT_RETRY_BASE_DELAY_MS = 500;
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
/** Sent as the bearer token when no key is configured: local servers ignore it, hosted ones answer 401. */
export const PLACEHOLDER_API_KEY = "statecraft-no-key";

const KNOWN_OPTIONS = new Set<string>([
  "model",
  "baseURL",
  "apiKey",
  "maxRetries",
  "timeoutMs",
  "idleTimeoutMs",
  "headers",
  "temperature",
  "maxTokens",
  "parallelToolCalls",
  "structuredOutput",
  "contextWindow",
  "extraBody",
  "retryBaseDelayMs",
  "maxRetryDelayMs",
]);

const checks = optionChecks("openaiModel");
const { invalid, integer } = checks;

/** Applies environment defaults and checks every option; a bad one throws `INVALID_OPTIONS` saying how to fix it. */
export function resolveOpenAIConfig(
  options: OpenAIModelOptions = {},
  env: OpenAIEnvironment = process.env as OpenAIEnvironment,
): ResolvedOpenAIConfig {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw invalid(`expected an options object like { model: "gpt-4o-mini" }, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw invalid(`unknown option "${key}"; known options: ${[...KNOWN_OPTIONS].join(", ")}`);
    }
  }

  const model = options.model ?? nonEmpty(env.STATECRAFT_MODEL);
  if (model === undefined) {
    throw invalid(`no model name: pass { model: "gpt-4o-mini" } (or your server's model name) or set STATECRAFT_MODEL`);
  }
  if (typeof model !== "string" || model.trim() === "") {
    throw invalid(`model must be a non-empty string, got ${describe(model)}`);
  }

  const baseURL = resolveBaseUrl(
    {
      option: options.baseURL,
      optionName: "baseURL",
      env: env.OPENAI_BASE_URL,
      envName: "OPENAI_BASE_URL",
      fallback: DEFAULT_BASE_URL,
      notHttp: (got, from) => `baseURL must be an http(s) URL such as "http://localhost:11434/v1", got ${got}` + (from === "OPENAI_BASE_URL" ? " (from OPENAI_BASE_URL)" : ""),
    },
    checks,
  );
  const { apiKey, apiKeySource } = resolveApiKey({ option: options.apiKey, env: env.OPENAI_API_KEY, envName: "OPENAI_API_KEY", placeholder: PLACEHOLDER_API_KEY }, checks);

  // A null `headers` counts as none here.
  const headers = checks.headers(options.headers ?? undefined);

  const extraBody = options.extraBody ?? {};
  if (extraBody === null || typeof extraBody !== "object" || Array.isArray(extraBody)) {
    throw invalid(`extraBody must be an object of request fields, got ${describe(extraBody)}`);
  }

  if (options.temperature !== undefined && (typeof options.temperature !== "number" || !Number.isFinite(options.temperature) || options.temperature < 0)) {
    throw invalid(`temperature must be a number ≥ 0, got ${describe(options.temperature)}`);
  }
  if (options.structuredOutput !== undefined && options.structuredOutput !== "json_schema" && options.structuredOutput !== "instructions") {
    throw invalid(`structuredOutput must be "json_schema" or "instructions", got ${describe(options.structuredOutput)}`);
  }
  if (options.parallelToolCalls !== undefined && typeof options.parallelToolCalls !== "boolean") {
    throw invalid(`parallelToolCalls must be true or false, got ${describe(options.parallelToolCalls)}`);
  }

  return {
    model,
    baseURL,
    apiKey,
    apiKeySource,
    maxRetries: integer("maxRetries", options.maxRetries, DEFAULT_MAX_RETRIES, 0),
    timeoutMs: integer("timeoutMs", options.timeoutMs, DEFAULT_TIMEOUT_MS, 1),
    idleTimeoutMs: integer("idleTimeoutMs", options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 1),
    headers,
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: integer("maxTokens", options.maxTokens, 0, 1) } : {}),
    ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
    structuredOutput: options.structuredOutput ?? "json_schema",
    ...(options.contextWindow !== undefined
      ? { contextWindow: integer("contextWindow", options.contextWindow, 0, 1) }
      : {}),
    extraBody: { ...extraBody },
    retryBaseDelayMs: integer("retryBaseDelayMs", options.retryBaseDelayMs, DEFAULT_RETRY_BASE_DELAY_MS, 0),
    maxRetryDelayMs: integer("maxRetryDelayMs", options.maxRetryDelayMs, DEFAULT_MAX_RETRY_DELAY_MS, 0),
  };
}
