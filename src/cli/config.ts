import { resolveSandbox, type SandboxOption } from "../sandbox/index.js";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { PermissionMode } from "../permissions/types.js";
import { isPermissionMode, PERMISSION_MODE_LIST } from "../permissions/modes.js";
import { PROJECT_CONFIG_FILE } from "../tools/protected-paths.js";
import { shellQuote } from "./denial-notice.js";
import { checkDefaultTrace, checkProjectTrace } from "./project-trace.js";
import type { RunFlags } from "./run-flags.js";
import { UsageError } from "./usage-error.js";
import { isTrustedFolder, USER_CONFIG_FILE_NAME, userConfigDir } from "./user-config.js";

export const CONFIG_FILE_NAME = PROJECT_CONFIG_FILE;

/**
 * Where a setting came from, for logs and messages: "config" is the project's file, "user" the user's own, "run" what
 * a stored (signed) run recorded, for `statecraft resume`.
 */
export type SettingSource = "flag" | "env" | "config" | "user" | "run";

/** The model a run uses. */
export type ModelChoice =
  | { kind: "script"; file: string; source: SettingSource }
  | {
      kind: "openai";
      /** The model name; the provider's default when absent. */
      model?: string;
      baseURL?: string;
      /** From OPENAI_API_KEY only: keys never come from flags (shell history) or the config file (often committed). */
      apiKey?: string;
      source: SettingSource;
    }
  | {
      kind: "anthropic";
      /** The model name; the CLI's default Claude model when absent. */
      model?: string;
      baseURL?: string;
      /** From ANTHROPIC_API_KEY only, as OPENAI_API_KEY for openai. */
      apiKey?: string;
      source: SettingSource;
    };

/** The wires `statecraft run` speaks (`--provider`, STATECRAFT_PROVIDER, "provider" in the config). */
export const PROVIDERS = ["openai", "anthropic"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * `statecraft.config.json`: defaults for runs in its folder. Flags win over it; environment variables win over it.
 * The user config file (`config.json` in the user config folder) has the same keys and comes after it.
 */
export interface ConfigFile {
  provider?: ProviderName;
  model?: string;
  baseUrl?: string;
  maxTurns?: number;
  maxToolCalls?: number;
  /** Seconds. */
  timeout?: number;
  systemPrompt?: string;
  trace?: string | false;
  permissions?: { mode?: PermissionMode; allow?: string[]; ask?: string[]; deny?: string[]; onDeny?: "end" | "continue" };
  /** Send the run's spans to the OTLP endpoint of the OTEL_* variables (as `--otel`). */
  otel?: boolean;
  /** The sandbox of the processes a run starts (docs/sandbox.md); a project's applies only in a trusted folder. */
  sandbox?: SandboxOption;
}

/** Everything a run needs, resolved from flags, then the environment, then the config file. */
export interface RunSettings {
  cwd: string;
  model: ModelChoice;
  maxTurns?: number;
  maxToolCalls?: number;
  timeoutMs?: number;
  systemPrompt?: string;
  sessionId?: string;
  /** A file, `false` for none, absent for the engine's default `<cwd>/.agent/trace.jsonl`. */
  traceFile?: string | false;
  permissions: { mode?: PermissionMode; allow: string[]; ask: string[]; deny: string[]; onDeny?: "end" | "continue" };
  /** `--otel` or `"otel": true`: spans to the OTLP endpoint of the OTEL_* variables (statecraft/otel). */
  otel?: boolean;
  /** `--sandbox`, else a trusted project's `sandbox`, else the user's; absent: the engine's default ("auto"). */
  sandbox?: SandboxOption;
  /** The config file that was read, if there was one. */
  configFile?: string;
  /** Settings of an untrusted project that were ignored, said on stderr before the run. */
  warnings: string[];
}

/** A config file that was read: where, and what it says. */
export interface LoadedConfig {
  file: string;
  config: ConfigFile;
}

/** Where the user's own settings are, and whether the project's folder is trusted. */
export interface ModelContext {
  /** The user config file, when there is one. */
  user?: LoadedConfig;
  /** The project's folder is trusted (`statecraft trust`, or `--trust-project`): its baseUrl may get the key. */
  trusted?: boolean;
}

/** The exact message when no model is configured anywhere (exit 2). */
export const NO_MODEL_MESSAGE = [
  "statecraft: no model configured. Set one of:",
  "  OPENAI_API_KEY=<key>          use OpenAI (choose the model with STATECRAFT_MODEL or --model)",
  "  OPENAI_BASE_URL=<url>         an OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama,",
  "                                and STATECRAFT_MODEL=<model name> (or --base-url and --model)",
  "  ANTHROPIC_API_KEY=<key>       with --provider anthropic (or STATECRAFT_PROVIDER=anthropic, or --model anthropic:<name>): Claude",
  "  --model script:<file>         a scripted model: a JSON file of steps, no network",
  `  or "model" / "baseUrl" in ${CONFIG_FILE_NAME} in the working folder.`,
  "To see statecraft work offline first, run: statecraft demo",
].join("\n");

const CONFIG_KEYS = ["$schema", "provider", "model", "baseUrl", "maxTurns", "maxToolCalls", "timeout", "systemPrompt", "trace", "permissions", "otel", "sandbox"];
const PERMISSION_KEYS = ["mode", "allow", "ask", "deny", "onDeny"];

function fail(file: string, what: string): never {
  throw new UsageError(`${file}: ${what}`);
}

function checkString(file: string, key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") fail(file, `"${key}" must be a non-empty string`);
  return value;
}

function checkPositive(file: string, key: string, value: unknown, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    fail(file, `"${key}" must be a ${integer ? "whole number of 1 or more" : "number of seconds greater than 0"}`);
  }
  return value;
}

function checkRules(file: string, key: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((rule) => typeof rule !== "string" || rule.trim() === "")) {
    fail(file, `"permissions.${key}" must be a list of rules like "bash(npm test)" or "edit_file"`);
  }
  return value as string[];
}

/** Reads and checks `statecraft.config.json` in `dir`; undefined when there is none. Mistakes are usage errors. */
export function loadConfigFile(dir: string): LoadedConfig | undefined {
  return readConfig(join(dir, CONFIG_FILE_NAME));
}

/** Reads and checks the user's own config file (same keys); undefined when there is none. */
export function loadUserConfig(env: NodeJS.ProcessEnv): LoadedConfig | undefined {
  return readConfig(join(userConfigDir(env), USER_CONFIG_FILE_NAME));
}

function readConfig(file: string): LoadedConfig | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    fail(file, `is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) fail(file, "must hold a JSON object");
  const raw = parsed as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key === "apiKey" || /key|token|secret/i.test(key)) {
      fail(file, `"${key}": keep keys out of ${basename(file)} (config files get committed and shared); set OPENAI_API_KEY instead`);
    }
    if (!CONFIG_KEYS.includes(key)) fail(file, `unknown setting "${key}"; known settings: ${CONFIG_KEYS.slice(1).join(", ")}`);
  }
  const config: ConfigFile = {};
  if (raw.provider !== undefined) {
    if (!isProvider(raw.provider)) fail(file, `"provider" must be one of ${PROVIDERS.join(", ")}, got ${JSON.stringify(raw.provider)}`);
    config.provider = raw.provider;
  }
  const model = checkString(file, "model", raw.model);
  if (model !== undefined) config.model = model;
  const baseUrl = checkString(file, "baseUrl", raw.baseUrl);
  if (baseUrl !== undefined) config.baseUrl = baseUrl;
  const maxTurns = checkPositive(file, "maxTurns", raw.maxTurns, true);
  if (maxTurns !== undefined) config.maxTurns = maxTurns;
  const maxToolCalls = checkPositive(file, "maxToolCalls", raw.maxToolCalls, true);
  if (maxToolCalls !== undefined) config.maxToolCalls = maxToolCalls;
  const timeout = checkPositive(file, "timeout", raw.timeout, false);
  if (timeout !== undefined) config.timeout = timeout;
  const systemPrompt = checkString(file, "systemPrompt", raw.systemPrompt);
  if (systemPrompt !== undefined) config.systemPrompt = systemPrompt;
  if (raw.trace !== undefined) {
    if (raw.trace !== false && (typeof raw.trace !== "string" || raw.trace.trim() === "")) {
      fail(file, `"trace" must be a file path or false`);
    }
    config.trace = raw.trace as string | false;
  }
  if (raw.otel !== undefined) {
    if (typeof raw.otel !== "boolean") fail(file, `"otel" must be true or false`);
    config.otel = raw.otel as boolean;
  }
  if (raw.permissions !== undefined) {
    const p = raw.permissions;
    if (p === null || typeof p !== "object" || Array.isArray(p)) fail(file, `"permissions" must be an object like { "mode": "acceptEdits", "allow": ["bash(npm test)"] }`);
    const perms = p as Record<string, unknown>;
    for (const key of Object.keys(perms)) {
      if (!PERMISSION_KEYS.includes(key)) fail(file, `unknown setting "permissions.${key}"; known: ${PERMISSION_KEYS.join(", ")}`);
    }
    config.permissions = {};
    if (perms.mode !== undefined) {
      if (!isPermissionMode(perms.mode)) {
        fail(file, `"permissions.mode" must be one of ${PERMISSION_MODE_LIST}, got ${JSON.stringify(perms.mode)}`);
      }
      config.permissions.mode = perms.mode as PermissionMode;
    }
    if (perms.onDeny !== undefined) {
      if (perms.onDeny !== "end" && perms.onDeny !== "continue") fail(file, `"permissions.onDeny" must be "end" or "continue", got ${JSON.stringify(perms.onDeny)}`);
      config.permissions.onDeny = perms.onDeny;
    }
    for (const key of ["allow", "ask", "deny"] as const) {
      const rules = checkRules(file, key, perms[key]);
      if (rules !== undefined) config.permissions[key] = rules;
    }
  }
  if (raw.sandbox !== undefined) {
    try {
      config.sandbox = resolveSandbox(raw.sandbox, `"sandbox"`);
    } catch (error) {
      fail(file, (error as Error).message);
    }
  }
  return { file, config };
}

function nonEmptyEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined;
}

/** `script:<file>` names a scripted model; the file is resolved against `base`. */
function scriptFile(model: string, base: string, from: string): string | undefined {
  if (!model.startsWith("script:")) return undefined;
  const file = model.slice("script:".length);
  if (file.trim() === "") throw new UsageError(`${from}: "script:" must be followed by a file, e.g. --model script:case.json`);
  return isAbsolute(file) ? file : resolve(base, file);
}

/**
 * The model from flags, then the environment, then the project's config file, then the user's. The provider first
 * (`--provider`, STATECRAFT_PROVIDER, "provider" in a config, or a `anthropic:`/`openai:` prefix on the model name;
 * openai by default), then each part (name, server) from the first place that sets it: OPENAI_API_KEY and
 * OPENAI_BASE_URL for openai, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL for anthropic. No openai model at all is a
 * usage error, and so is a server chosen by an untrusted project while the provider's key is set: the key would go to it.
 */
export function resolveModel(
  flags: Pick<RunFlags, "model" | "baseUrl" | "provider">,
  env: NodeJS.ProcessEnv,
  invocationDir: string,
  config?: LoadedConfig,
  context: ModelContext = {},
): ModelChoice {
  const { user } = context;
  const envModel = nonEmptyEnv(env, "STATECRAFT_MODEL");

  const [model, modelSource, modelBase, modelFrom]: [string | undefined, SettingSource | undefined, string, string] =
    flags.model !== undefined
      ? [flags.model, "flag", invocationDir, "--model"]
      : envModel !== undefined
        ? [envModel, "env", invocationDir, "STATECRAFT_MODEL"]
        : config?.config.model !== undefined
          ? [config.config.model, "config", dirname(config.file), config.file]
          : user?.config.model !== undefined
            ? [user.config.model, "user", dirname(user.file), user.file]
            : [undefined, undefined, invocationDir, ""];

  if (model !== undefined && modelSource !== undefined) {
    const file = scriptFile(model, modelBase, modelFrom);
    if (file !== undefined) {
      if (!existsSync(file)) throw new UsageError(`${modelFrom}: scripted model file ${file} does not exist`);
      return { kind: "script", file, source: modelSource };
    }
  }
  const provider = resolveProvider(flags, env, config, user, model, modelFrom);
  const name = model !== undefined ? withoutProvider(model, modelFrom) : undefined;
  const keyVar = provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  const baseVar = provider === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
  const envBase = nonEmptyEnv(env, baseVar);
  const apiKey = nonEmptyEnv(env, keyVar);
  const [baseURL, baseSource]: [string | undefined, SettingSource | undefined] =
    flags.baseUrl !== undefined
      ? [flags.baseUrl, "flag"]
      : envBase !== undefined
        ? [envBase, "env"]
        : config?.config.baseUrl !== undefined
          ? [config.config.baseUrl, "config"]
          : user?.config.baseUrl !== undefined
            ? [user.config.baseUrl, "user"]
            : [undefined, undefined];

  // Choosing anthropic is a choice of model (its default one); openai with nothing set names no server at all.
  if (provider === "openai" && model === undefined && baseURL === undefined && apiKey === undefined) throw new UsageError(NO_MODEL_MESSAGE);
  const from =
    baseSource === "flag" ? "--base-url" : baseSource === "env" ? baseVar : `${(baseSource === "user" ? user : config)?.file}: "baseUrl"`;
  const example = provider === "anthropic" ? "https://api.anthropic.com" : "http://localhost:11434/v1";
  if (baseURL !== undefined) {
    try {
      const url = new URL(baseURL);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http");
    } catch {
      throw new UsageError(`${from}: ${JSON.stringify(baseURL)} is not an http(s) URL, e.g. ${example}`);
    }
  }
  // A cloned repository must not be able to collect the user's key: a server the project chose gets it only when
  // the user trusts the folder. Refused before any request (model discovery sends the key too).
  if (baseSource === "config" && apiKey !== undefined && context.trusted !== true) {
    const dir = config ? dirname(config.file) : invocationDir;
    // The URL is the project's text: printed quoted, and normalised (percent-encoded) where it is to be copied.
    throw new UsageError(
      [
        `${from}: ${JSON.stringify(baseURL)} was chosen by the project, not by you, and ${keyVar} is set: statecraft won't send your key to it.`,
        "To allow it, do one of:",
        `  statecraft trust ${shellQuote(dir)}   (trust this folder's ${CONFIG_FILE_NAME} from now on)`,
        "  --trust-project   (trust it for this run only)",
        `  --base-url ${shellQuote(new URL(baseURL!).href)}   (or ${baseVar}: choose the server yourself)`,
        `  unset ${keyVar}   (for a server that needs no key)`,
      ].join("\n"),
    );
  }
  const source: SettingSource = modelSource ?? baseSource ?? "env";
  return {
    kind: provider,
    ...(name !== undefined ? { model: name } : {}),
    ...(baseURL !== undefined ? { baseURL } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    source,
  };
}

function isProvider(value: unknown): value is ProviderName {
  return typeof value === "string" && (PROVIDERS as readonly string[]).includes(value);
}

/** `anthropic:claude-…` names its provider; any other name (Ollama's `qwen2.5:7b` too) does not. */
function providerPrefix(model: string): ProviderName | undefined {
  const colon = model.indexOf(":");
  const prefix = colon > 0 ? model.slice(0, colon) : "";
  return isProvider(prefix) ? prefix : undefined;
}

function withoutProvider(model: string, from: string): string {
  const prefix = providerPrefix(model);
  if (prefix === undefined) return model;
  const name = model.slice(prefix.length + 1);
  if (name.trim() === "") throw new UsageError(`${from}: "${prefix}:" must be followed by a model name, e.g. --model ${prefix === "anthropic" ? "anthropic:claude-sonnet-4-5" : "openai:gpt-4o-mini"}`);
  return name;
}

/**
 * The provider: a prefix on the model name, else `--provider`, STATECRAFT_PROVIDER, the project's "provider", the
 * user's; openai when none says. A prefix that contradicts `--provider` is a usage error (which one was meant?).
 */
function resolveProvider(
  flags: Pick<RunFlags, "provider">,
  env: NodeJS.ProcessEnv,
  config: LoadedConfig | undefined,
  user: LoadedConfig | undefined,
  model: string | undefined,
  modelFrom: string,
): ProviderName {
  const envProvider = nonEmptyEnv(env, "STATECRAFT_PROVIDER");
  if (envProvider !== undefined && !isProvider(envProvider)) {
    throw new UsageError(`STATECRAFT_PROVIDER: must be one of ${PROVIDERS.join(", ")}, got ${JSON.stringify(envProvider)}`);
  }
  if (flags.provider !== undefined && !isProvider(flags.provider)) {
    throw new UsageError(`--provider: must be one of ${PROVIDERS.join(", ")}, got ${JSON.stringify(flags.provider)}`);
  }
  const prefixed = model !== undefined ? providerPrefix(model) : undefined;
  if (prefixed !== undefined && flags.provider !== undefined && prefixed !== flags.provider) {
    throw new UsageError(`--provider ${flags.provider} and ${modelFrom} ${JSON.stringify(model)} name different providers; leave out one of them`);
  }
  return prefixed ?? flags.provider ?? envProvider ?? config?.config.provider ?? user?.config.provider ?? "openai";
}

/** Resolves the working folder: it must exist and be a folder. */
export function resolveCwd(flag: string | undefined, invocationDir: string): string {
  const cwd = flag === undefined ? invocationDir : resolve(invocationDir, flag);
  if (!existsSync(cwd)) throw new UsageError(`--cwd: folder ${cwd} does not exist`);
  if (!statSync(cwd).isDirectory()) throw new UsageError(`--cwd: ${cwd} is not a folder`);
  return cwd;
}

/**
 * What an untrusted project may not decide: its permission mode and allow rules (they would let the agent act without
 * asking). Returned as a warning; its deny and ask rules only restrict, so they always apply.
 */
function ignoredPermissions(loaded: LoadedConfig, cwd: string): string | undefined {
  const { mode, allow = [] } = loaded.config.permissions ?? {};
  if (mode === undefined && allow.length === 0) return undefined;
  const what = [
    ...(mode !== undefined ? [`permission mode ${JSON.stringify(mode)}`] : []),
    ...(allow.length > 0 ? [`allow rules ${allow.map((rule) => JSON.stringify(rule)).join(", ")}`] : []),
  ].join(" and ");
  return (
    `warning: ${loaded.file} sets ${what}; ignored, because ${cwd} is not a folder you trust. ` +
    `To apply them: statecraft trust ${shellQuote(cwd)} (or --trust-project for this run).`
  );
}

/**
 * A model named with no server and no key: the request would go to OpenAI's public endpoint, which refuses it without
 * a key. Said before the run, since the usual intent was a local server whose OPENAI_BASE_URL is missing.
 */
function publicEndpointWarning(model: string | undefined): string {
  return (
    `warning: the model ${JSON.stringify(model ?? "")} will be asked for at OpenAI's public endpoint (https://api.openai.com/v1) without a key, ` +
    "since neither OPENAI_BASE_URL nor OPENAI_API_KEY is set. For a local server set OPENAI_BASE_URL (e.g. http://localhost:11434/v1) " +
    "or --base-url; for OpenAI set OPENAI_API_KEY."
  );
}

/**
 * Flags first, then the environment, then `statecraft.config.json` in the working folder, then the user's config
 * (the model only when `chosen` does not give it).
 * The project's file is untrusted unless the user trusts its folder: see `ignoredPermissions` and `resolveModel`, and
 * its `trace` must stay inside the project's `.agent/`.
 */
export function resolveRunSettings(flags: RunFlags, env: NodeJS.ProcessEnv, invocationDir: string, chosen?: ModelChoice): RunSettings {
  const cwd = resolveCwd(flags.cwd, invocationDir);
  const loaded = loadConfigFile(cwd);
  const user = loadUserConfig(env);
  const trusted = flags.trustProject === true || (loaded !== undefined && isTrustedFolder(cwd, env));
  const project = loaded?.config ?? {};
  const own = user?.config ?? {};
  // A model chosen beforehand (what a resumed run recorded) is not looked for here: a project's baseUrl plays no part.
  const model = chosen ?? resolveModel(flags, env, invocationDir, loaded, { ...(user ? { user } : {}), trusted });
  const warnings: string[] = [];
  const ignored = loaded && !trusted ? ignoredPermissions(loaded, cwd) : undefined;
  if (ignored !== undefined) warnings.push(ignored);
  if (model.kind === "openai" && model.baseURL === undefined && model.apiKey === undefined) warnings.push(publicEndpointWarning(model.model));
  if (model.kind === "anthropic" && model.baseURL === undefined && model.apiKey === undefined) {
    warnings.push("warning: ANTHROPIC_API_KEY is not set: Anthropic's API (https://api.anthropic.com) will refuse the request. Set it, or --base-url for a server that needs no key.");
  }
  const rules = (key: "allow" | "ask" | "deny"): string[] => [
    ...(own.permissions?.[key] ?? []),
    ...(key === "allow" && !trusted ? [] : (project.permissions?.[key] ?? [])),
    ...(flags[key] ?? []),
  ];
  const settings: RunSettings = { cwd, model, permissions: { allow: rules("allow"), ask: rules("ask"), deny: rules("deny") }, warnings };
  const mode = flags.permissionMode ?? (trusted ? project.permissions?.mode : undefined) ?? own.permissions?.mode;
  if (mode !== undefined) settings.permissions.mode = mode;
  // Not a loosening (a denied call stays denied), so a project's own choice applies trusted or not.
  const onDeny = flags.onDeny ?? project.permissions?.onDeny ?? own.permissions?.onDeny;
  if (onDeny !== undefined) settings.permissions.onDeny = onDeny;
  const maxTurns = flags.maxTurns ?? project.maxTurns ?? own.maxTurns;
  if (maxTurns !== undefined) settings.maxTurns = maxTurns;
  const maxToolCalls = flags.maxToolCalls ?? project.maxToolCalls ?? own.maxToolCalls;
  if (maxToolCalls !== undefined) settings.maxToolCalls = maxToolCalls;
  const timeout = flags.timeout ?? project.timeout ?? own.timeout;
  if (timeout !== undefined) settings.timeoutMs = Math.round(timeout * 1000);
  const systemPrompt = flags.systemPrompt ?? project.systemPrompt ?? own.systemPrompt;
  if (systemPrompt !== undefined) settings.systemPrompt = systemPrompt;
  if (flags.session !== undefined) settings.sessionId = flags.session;
  if (flags.trace !== undefined) settings.traceFile = flags.trace === false ? false : resolve(invocationDir, flags.trace);
  else if (loaded && project.trace !== undefined) settings.traceFile = project.trace === false ? false : checkProjectTrace(cwd, project.trace, loaded.file);
  else if (own.trace !== undefined) settings.traceFile = own.trace === false ? false : resolve(cwd, own.trace);
  else checkDefaultTrace(cwd);
  const otel = flags.otel ?? project.otel ?? own.otel;
  if (otel !== undefined) settings.otel = otel;
  // A cloned repository must not turn off the sandbox meant to contain it: its "sandbox" applies only when trusted.
  if (loaded && project.sandbox !== undefined && !trusted) {
    warnings.push(`warning: ${loaded.file} sets "sandbox"; ignored, because ${cwd} is not a folder you trust. To apply it: statecraft trust ${shellQuote(cwd)} (or --trust-project for this run).`);
  }
  const sandbox = flags.sandbox ?? (trusted ? project.sandbox : undefined) ?? own.sandbox;
  if (sandbox !== undefined) settings.sandbox = sandbox;
  if (loaded) settings.configFile = loaded.file;
  return settings;
}
