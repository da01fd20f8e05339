import { resolveApiKey, resolveBaseUrl } from "../endpoint-options.js";
import { describe, nonEmpty, optionChecks } from "../option-checks.js";

/** Options of `anthropicModel()`. */
export interface AnthropicModelOptions {
  /** The model name, e.g. "claude-sonnet-4-5". Default: `STATECRAFT_MODEL`. */
  model: string;
  /** API key (the official SDK sends it as a bearer token). Default: `ANTHROPIC_API_KEY`; without one a placeholder is sent (the API answers 401). */
  apiKey?: string;
  /** Base URL of the Messages API (without `/v1`). Default: `ANTHROPIC_BASE_URL`, else https://api.anthropic.com. */
  baseUrl?: string;
  /** Output token limit of one model call (`max_tokens`, which the Messages API requires); with thinking, above its budget. */
  maxTokens: number;
  /** Extended thinking: `{ budgetTokens }` (at least 1024) turns it on; `false` or absent leaves it off. */
  thinking?: { budgetTokens: number } | false;
  /** Prompt caching: `cache_control` breakpoints on the tools, the system prompt and the last message. Default false. */
  cache?: boolean;
  /** The model's context window in tokens, exposed as `Model.contextWindow` (compaction uses it). */
  contextWindow?: number;
  /** Retries after the first attempt for retryable failures (429, 529 overloaded, 5xx, dropped or idle streams). Default 2. */
  maxRetries?: number;
  /** Time limit of one attempt, from sending the request to the end of the stream. Default 600 000 (10 minutes). */
  timeoutMs?: number;
  /** An attempt fails (retryably) when the server sends nothing for this long. Default 60 000. */
  idleTimeoutMs?: number;
  /** Extra HTTP headers sent with every request (e.g. `{ "anthropic-beta": "..." }`). */
  headers?: Record<string, string>;
  /** Sampling temperature (0 to 1); the API refuses it beside thinking. */
  temperature?: number;
  /** First backoff delay between retries; doubled each retry, with jitter. Default 500. */
  retryBaseDelayMs?: number;
  /** Cap on any delay between retries, including one asked for by `retry-after`. Default 60 000. */
  maxRetryDelayMs?: number;
}

/** The environment variables `anthropicModel()` reads. */
export interface AnthropicEnvironment {
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  STATECRAFT_MODEL?: string;
}

/** Options with every default applied and every value checked. */
export interface ResolvedAnthropicConfig {
  model: string;
  baseUrl: string;
  /** The key to send, or the placeholder when none was given. Never put into messages. */
  apiKey: string;
  apiKeySource: "option" | "env" | "none";
  maxTokens: number;
  thinking?: { budgetTokens: number };
  cache: boolean;
  contextWindow?: number;
  maxRetries: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  headers: Record<string, string>;
  temperature?: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
}

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
/** Sent as the key when none is configured: a local proxy may ignore it, the API answers 401. */
export const ANTHROPIC_PLACEHOLDER_KEY = "statecraft-no-key";
/** The API's floor for `thinking.budget_tokens`. */
export const MIN_THINKING_BUDGET = 1024;

const KNOWN_OPTIONS = new Set<string>([
  "model",
  "apiKey",
  "baseUrl",
  "maxTokens",
  "thinking",
  "cache",
  "contextWindow",
  "maxRetries",
  "timeoutMs",
  "idleTimeoutMs",
  "headers",
  "temperature",
  "retryBaseDelayMs",
  "maxRetryDelayMs",
]);

const checks = optionChecks("anthropicModel");
const { invalid, integer } = checks;

/** Applies environment defaults and checks every option; a bad one throws `INVALID_OPTIONS` saying how to fix it. */
export function resolveAnthropicConfig(
  options: Partial<AnthropicModelOptions>,
  env: AnthropicEnvironment = process.env as AnthropicEnvironment,
): ResolvedAnthropicConfig {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw invalid(`expected an options object like { model: "claude-sonnet-4-5", maxTokens: 8192 }, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      // The OpenAI provider spells it baseURL: say which spelling this one wants.
      const hint = key === "baseURL" ? ' (this option is spelled "baseUrl")' : "";
      throw invalid(`unknown option "${key}"${hint}; known options: ${[...KNOWN_OPTIONS].join(", ")}`);
    }
  }
  const model = options.model ?? nonEmpty(env.STATECRAFT_MODEL);
  if (model === undefined) throw invalid(`no model name: pass { model: "claude-sonnet-4-5" } or set STATECRAFT_MODEL`);
  if (typeof model !== "string" || model.trim() === "") throw invalid(`model must be a non-empty string, got ${describe(model)}`);

  const baseUrl = resolveBaseUrl(
    {
      option: options.baseUrl,
      optionName: "baseUrl",
      env: env.ANTHROPIC_BASE_URL,
      envName: "ANTHROPIC_BASE_URL",
      fallback: ANTHROPIC_DEFAULT_BASE_URL,
      notHttp: (got, from) => `${from} must be an http(s) URL such as "https://api.anthropic.com", got ${got}`,
    },
    checks,
  );
  const { apiKey, apiKeySource } = resolveApiKey({ option: options.apiKey, env: env.ANTHROPIC_API_KEY, envName: "ANTHROPIC_API_KEY", placeholder: ANTHROPIC_PLACEHOLDER_KEY }, checks);
  if (options.maxTokens === undefined) {
    throw invalid(`maxTokens is required (the Messages API needs an output limit per call), e.g. { maxTokens: 8192 }`);
  }
  const maxTokens = integer("maxTokens", options.maxTokens, 0, 1);
  const thinking = resolveThinking(options.thinking, maxTokens);
  if (options.cache !== undefined && typeof options.cache !== "boolean") throw invalid(`cache must be true or false, got ${describe(options.cache)}`);
  const temperature = options.temperature;
  if (temperature !== undefined && (typeof temperature !== "number" || !Number.isFinite(temperature) || temperature < 0 || temperature > 1)) {
    throw invalid(`temperature must be a number from 0 to 1, got ${describe(temperature)}`);
  }
  if (temperature !== undefined && thinking !== undefined) {
    throw invalid(`temperature can't be set with thinking on (the API refuses it); leave temperature out or set thinking: false`);
  }
  return {
    model,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    apiKey,
    apiKeySource,
    maxTokens,
    ...(thinking !== undefined ? { thinking } : {}),
    cache: options.cache === true,
    ...(options.contextWindow !== undefined ? { contextWindow: integer("contextWindow", options.contextWindow, 0, 1) } : {}),
    maxRetries: integer("maxRetries", options.maxRetries, 2, 0),
    timeoutMs: integer("timeoutMs", options.timeoutMs, 600_000, 1),
    idleTimeoutMs: integer("idleTimeoutMs", options.idleTimeoutMs, 60_000, 1),
    headers: checks.headers(options.headers),
    ...(temperature !== undefined ? { temperature } : {}),
    retryBaseDelayMs: integer("retryBaseDelayMs", options.retryBaseDelayMs, 500, 0),
    maxRetryDelayMs: integer("maxRetryDelayMs", options.maxRetryDelayMs, 60_000, 0),
  };
}

function resolveThinking(value: unknown, maxTokens: number): { budgetTokens: number } | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid(`thinking must be { budgetTokens: number } or false, got ${describe(value)}`);
  }
  const budget = (value as { budgetTokens?: unknown }).budgetTokens;
  if (typeof budget !== "number" || !Number.isInteger(budget) || budget < MIN_THINKING_BUDGET) {
    throw invalid(`thinking.budgetTokens must be an integer ≥ ${MIN_THINKING_BUDGET} (the API's minimum), got ${describe(budget)}`);
  }
  if (budget >= maxTokens) {
    throw invalid(`thinking.budgetTokens (${budget}) must be less than maxTokens (${maxTokens}): the budget is part of the output limit`);
  }
  return { budgetTokens: budget };
}
