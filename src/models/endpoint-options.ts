import { blockedPort, blockedPortMessage } from "./openai/blocked-ports.js";
import { describe, isHttpUrl, nonEmpty, type OptionChecks } from "./option-checks.js";

/** Where a provider's key comes from: the option, else its environment variable, else a placeholder. */
export interface ApiKeySpec {
  option: unknown;
  env: string | undefined;
  envName: string;
  placeholder: string;
}

/** The key to send and where it came from (for actionable 401 messages). A bad `apiKey` option throws. */
export function resolveApiKey(spec: ApiKeySpec, checks: OptionChecks): { apiKey: string; apiKeySource: "option" | "env" | "none" } {
  if (spec.option !== undefined) {
    if (typeof spec.option !== "string" || spec.option === "") throw checks.invalid(`apiKey must be a non-empty string (or leave it out to use ${spec.envName})`);
    return { apiKey: spec.option, apiKeySource: "option" };
  }
  const fromEnv = nonEmpty(spec.env);
  if (fromEnv !== undefined) return { apiKey: fromEnv, apiKeySource: "env" };
  return { apiKey: spec.placeholder, apiKeySource: "none" };
}

/** Where a provider's base URL comes from: the option, else its environment variable, else the provider's own. */
export interface BaseUrlSpec {
  option: unknown;
  optionName: string;
  env: string | undefined;
  envName: string;
  fallback: string;
  /** The message for a value that is not an http(s) URL; `from` is the option's or the variable's name. */
  notHttp(got: string, from: string): string;
}

/** The base URL, checked to be http(s) on a port `fetch` does not refuse; a bad one throws naming where it came from. */
export function resolveBaseUrl(spec: BaseUrlSpec, checks: OptionChecks): string {
  const baseUrl = (spec.option ?? nonEmpty(spec.env) ?? spec.fallback) as unknown;
  const from = spec.option === undefined ? spec.envName : spec.optionName;
  if (typeof baseUrl !== "string" || !isHttpUrl(baseUrl)) throw checks.invalid(spec.notHttp(describe(baseUrl), from));
  const refused = blockedPort(baseUrl);
  if (refused !== undefined) throw checks.invalid(blockedPortMessage(baseUrl, refused, from));
  return baseUrl;
}
