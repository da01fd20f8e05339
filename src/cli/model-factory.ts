import { AgentError } from "../errors/agent-error.js";
import { anthropicModel } from "../models/anthropic/index.js";
import type { Model } from "../models/model.js";
import { blockedPort, blockedPortMessage } from "../models/openai/blocked-ports.js";
import { openaiModel } from "../models/openai/index.js";
import { scriptedModel } from "../models/scripted.js";
import type { ModelChoice } from "./config.js";
import type { Logger } from "./logger.js";
import { UsageError } from "./usage-error.js";

/** The model OpenAI itself is asked for when only OPENAI_API_KEY is set. */
export const DEFAULT_OPENAI_MODEL = "gpt-4o-mini";
const DISCOVERY_TIMEOUT_MS = 3_000;
/** The Claude model `--provider anthropic` uses when no model is named. */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5";
/** The output limit of one model call for Claude (the Messages API requires one). */
export const ANTHROPIC_MAX_TOKENS = 8192;

export interface CreatedModel {
  model: Model;
  /** What the model is, for the header line and logs: "gpt-4o-mini at http://…", "script case.json". */
  description: string;
  /** Set when no model name was configured: picked from the server's model list, or the default name. */
  nameFrom?: "server" | "default";
  /** The wire it speaks ("openai", "anthropic"), for the header line; absent for a scripted model. */
  provider?: string;
}

/**
 * Asks an OpenAI-compatible server which models it serves (`GET /models`), for a local server (Ollama, llama.cpp,
 * vLLM, LM Studio) configured with a URL but no model name: the first one's name, `"none"` when the list is empty,
 * undefined when the server can't say (no such endpoint, not reachable, not the list's JSON).
 */
export async function discoverModel(baseURL: string, apiKey: string | undefined, logger: Logger): Promise<string | "none" | undefined> {
  const url = `${baseURL.replace(/\/+$/, "")}/models`;
  try {
    const response = await fetch(url, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
    });
    if (!response.ok) {
      logger.debug({ url, status: response.status }, "model list not available");
      return undefined;
    }
    const body = (await response.json()) as { data?: Array<{ id?: unknown }> };
    if (!Array.isArray(body?.data)) return undefined;
    const first = body.data.find((m) => typeof m?.id === "string" && m.id !== "");
    return first ? (first.id as string) : "none";
  } catch (error) {
    logger.debug({ url, err: (error as Error).message }, "model list not available");
    return undefined;
  }
}

/** Builds the model a run uses. Mistakes in the configuration (a bad script file, a bad option) are usage errors. */
export async function createModel(choice: ModelChoice, logger: Logger): Promise<CreatedModel> {
  try {
    if (choice.kind === "script") {
      return { model: scriptedModel.fromFile(choice.file), description: `script ${choice.file}` };
    }
    if (choice.kind === "anthropic") return createAnthropicModel(choice);
    // A port fetch refuses fails every request the same way: said once, before anything is asked of the server.
    const refused = choice.baseURL !== undefined ? blockedPort(choice.baseURL) : undefined;
    if (refused !== undefined) throw new UsageError(blockedPortMessage(choice.baseURL!, refused, "--base-url (or OPENAI_BASE_URL, or baseUrl in the config)"));
    let name = choice.model;
    let discovered: string | undefined;
    if (name === undefined && choice.baseURL !== undefined) {
      discovered = await discoverModel(choice.baseURL, choice.apiKey, logger);
      // Asking it for a made-up default would only fail later, less clearly.
      if (discovered === "none") throw new UsageError(emptyListMessage(choice.baseURL));
      if (discovered !== undefined) {
        name = discovered;
        logger.info({ model: name, baseURL: choice.baseURL }, "no model named; using the server's first model");
      } else {
        // An operational note, not a warning on stderr: the header line says which model is used and why, and if the
        // server can't be reached the run's one error says so.
        logger.info({ model: DEFAULT_OPENAI_MODEL, baseURL: choice.baseURL }, "no model named and the server lists none; trying the default (set STATECRAFT_MODEL)");
      }
    }
    const defaulted = name === undefined;
    name ??= DEFAULT_OPENAI_MODEL;
    const model = openaiModel(
      {
        model: name,
        ...(choice.baseURL !== undefined ? { baseURL: choice.baseURL } : {}),
        ...(choice.apiKey !== undefined ? { apiKey: choice.apiKey } : {}),
      },
      // Only what was resolved above counts; the provider must not pick up other environment defaults behind our back.
      {},
    );
    return {
      model,
      provider: "openai",
      description: `${name}${choice.baseURL !== undefined ? ` at ${choice.baseURL}` : ""}`,
      ...(discovered !== undefined ? { nameFrom: "server" as const } : defaulted ? { nameFrom: "default" as const } : {}),
    };
  } catch (error) {
    if (error instanceof AgentError && (error.code === "INVALID_SCRIPT" || error.code === "INVALID_OPTIONS")) {
      throw new UsageError(error.message);
    }
    throw error;
  }
}

/**
 * Claude over Anthropic's Messages API, with prompt caching on (an agent resends its whole conversation every turn)
 * and the CLI's output limit. Only what was resolved counts: no other environment default is read behind our back.
 */
function createAnthropicModel(choice: Extract<ModelChoice, { kind: "anthropic" }>): CreatedModel {
  const refused = choice.baseURL !== undefined ? blockedPort(choice.baseURL) : undefined;
  if (refused !== undefined) throw new UsageError(blockedPortMessage(choice.baseURL!, refused, "--base-url (or ANTHROPIC_BASE_URL, or baseUrl in the config)"));
  const name = choice.model ?? DEFAULT_ANTHROPIC_MODEL;
  const model = anthropicModel(
    {
      model: name,
      maxTokens: ANTHROPIC_MAX_TOKENS,
      cache: true,
      ...(choice.baseURL !== undefined ? { baseUrl: choice.baseURL } : {}),
      ...(choice.apiKey !== undefined ? { apiKey: choice.apiKey } : {}),
    },
    {},
  );
  return {
    model,
    provider: "anthropic",
    description: `${name}${choice.baseURL !== undefined ? ` at ${choice.baseURL}` : ""}`,
    ...(choice.model === undefined ? { nameFrom: "default" as const } : {}),
  };
}

function emptyListMessage(baseURL: string): string {
  return [
    `the server at ${baseURL} lists no models (GET ${baseURL.replace(/\/+$/, "")}/models is empty), and no model was named.`,
    "Load or pull a model on the server (e.g. ollama pull qwen2.5:7b), then name it:",
    "  --model <name>   or   STATECRAFT_MODEL=<name>   (or \"model\" in statecraft.config.json)",
  ].join("\n");
}
