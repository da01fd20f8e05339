import { AgentError } from "../../errors/agent-error.js";
import { blockedPort, blockedPortMessage } from "./blocked-ports.js";

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

  const baseURL = options.baseURL ?? nonEmpty(env.OPENAI_BASE_URL) ?? DEFAULT_BASE_URL;
  if (typeof baseURL !== "string" || !isHttpUrl(baseURL)) {
    throw invalid(
      `baseURL must be an http(s) URL such as "http://localhost:11434/v1", got ${describe(baseURL)}` +
        (options.baseURL === undefined ? " (from OPENAI_BASE_URL)" : ""),
    );
  }
  const refused = blockedPort(baseURL);
  if (refused !== undefined) throw invalid(blockedPortMessage(baseURL, refused, options.baseURL === undefined ? "OPENAI_BASE_URL" : "baseURL"));

  let apiKey: string;
  let apiKeySource: ResolvedOpenAIConfig["apiKeySource"];
  if (options.apiKey !== undefined) {
    if (typeof options.apiKey !== "string" || options.apiKey === "") {
      throw invalid(`apiKey must be a non-empty string (or leave it out to use OPENAI_API_KEY)`);
    }
    apiKey = options.apiKey;
    apiKeySource = "option";
  } else if (nonEmpty(env.OPENAI_API_KEY) !== undefined) {
    apiKey = env.OPENAI_API_KEY!.trim();
    apiKeySource = "env";
  } else {
    apiKey = PLACEHOLDER_API_KEY;
    apiKeySource = "none";
  }

  const headers = options.headers ?? {};
  if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
    throw invalid(`headers must be an object of header names to string values, got ${describe(headers)}`);
  }
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string") throw invalid(`headers["${name}"] must be a string, got ${describe(value)}`);
  }

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
    headers: { ...headers },
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

function integer(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw invalid(`${name} must be an integer ≥ ${min}, got ${describe(value)}`);
  }
  return value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : String(value);
}

function invalid(message: string): AgentError {
  return new AgentError("INVALID_OPTIONS", `openaiModel: ${message}`);
}
