import { isHttpUrl, type StoredSettings } from "../durable/run-store.js";
import type { ModelChoice } from "./config.js";
import { UsageError } from "./usage-error.js";

/**
 * The model `statecraft resume` uses without model flags: the provider, name and server the stored run recorded, the
 * name and server each replaced by `--model` / `--base-url` when given. Undefined means "choose as `run` does" (flags,
 * environment, config): the run recorded no server (a scripted model, or a run stored by an older statecraft), both
 * flags are given, or `--model` names a script. A record without a provider is an openai run (older records).
 *
 * The key (OPENAI_API_KEY, or ANTHROPIC_API_KEY for an anthropic run; never recorded) goes to a server the user named
 * (`--base-url`), and to the recorded server only when the run had sent a key to it. The record is signed (the file
 * store refuses it otherwise, RUN_DAMAGED), so the engine wrote it; and a key sent at run time means the user's own
 * settings, or a project they trust, chose that server. A server that got no key (say a project's `baseUrl` in an
 * untrusted folder, run with no key set) does not get one now: `warn` says so, and how to send it.
 */
export function recordedModelChoice(
  flags: { model?: string; baseUrl?: string },
  recorded: StoredSettings,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): ModelChoice | undefined {
  if (recorded.baseUrl === undefined) return undefined;
  if (flags.model !== undefined && flags.baseUrl !== undefined) return undefined;
  if (flags.model?.startsWith("script:")) return undefined;
  if (flags.baseUrl !== undefined && !isHttpUrl(flags.baseUrl)) {
    throw new UsageError(`--base-url: ${JSON.stringify(flags.baseUrl)} is not an http(s) URL, e.g. http://localhost:11434/v1`);
  }
  const provider = recorded.provider ?? "openai";
  if (provider !== "openai" && provider !== "anthropic") {
    throw new UsageError(`the run was made with a model of provider ${JSON.stringify(provider)}, which statecraft resume can't build; resume it from code with resume()`);
  }
  const model = flags.model ?? recorded.model;
  const baseURL = flags.baseUrl ?? recorded.baseUrl;
  const keyVar = provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  const key = env[keyVar]?.trim() || undefined;
  const keyGoes = flags.baseUrl !== undefined || recorded.keySent === true;
  if (key !== undefined && !keyGoes) {
    warn(
      `the run talked to ${JSON.stringify(baseURL)} without an API key; ${keyVar} is not sent to it now. ` +
        `To send it, name the server yourself: --base-url ${new URL(baseURL).href}`,
    );
  }
  return {
    kind: provider,
    ...(model !== undefined ? { model } : {}),
    baseURL,
    ...(key !== undefined && keyGoes ? { apiKey: key } : {}),
    source: flags.model !== undefined || flags.baseUrl !== undefined ? "flag" : "run",
  };
}
