import { AgentError } from "../errors/agent-error.js";

/** `"auto"`: sandboxed where the platform allows, else one warning per run. `"required"`: never unsandboxed. */
export type SandboxMode = "auto" | "required" | "off";

/** Where a sandboxed process may connect: nowhere (default), anywhere (`"host"`), or the listed hosts through a proxy. */
export type SandboxNetwork = "none" | "host" | { allow: readonly string[] };

/** What the processes a run starts get of this process's environment, beyond the scrubbed default. */
export interface SandboxEnv {
  /** Names passed on although the scrub would drop them (`["GITHUB_TOKEN"]`). A host's hidden values stay hidden. */
  pass?: readonly string[];
  /** Variables set for every process (after the scrub). */
  set?: Readonly<Record<string, string>>;
}

export interface SandboxSettings {
  mode?: SandboxMode;
  network?: SandboxNetwork;
  /** More paths hidden inside the sandbox (`~` is the home folder), beside ~/.ssh, ~/.aws, … and the statecraft folder. */
  hide?: readonly string[];
  env?: SandboxEnv;
}

/** The `sandbox` option of query(), createWorker(), mcpTools() and the config file. */
export type SandboxOption = SandboxMode | SandboxSettings;

/** The option checked and with its defaults: what a run carries to every process it starts. */
export interface ResolvedSandbox {
  mode: SandboxMode;
  network: SandboxNetwork;
  hide: readonly string[];
  env: { pass: readonly string[]; set: Readonly<Record<string, string>> };
}

export const DEFAULT_SANDBOX: ResolvedSandbox = Object.freeze({ mode: "auto", network: "none", hide: [], env: { pass: [], set: {} } });

const MODES: readonly SandboxMode[] = ["auto", "required", "off"];
const KEYS = ["mode", "network", "hide", "env"];
const SHAPE = '"auto", "required", "off" or { mode?, network?: "none" | "host" | { allow: ["registry.npmjs.org", "127.0.0.1:5432", "*.github.com"] }, hide?: [paths], env?: { pass?: [names], set?: { NAME: "value" } } }';
/** A host, `*.` and a domain, or either with `:port`; IPv6 in brackets. */
const ALLOW_ENTRY = /^(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/i;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a `sandbox` option (`where` names it in messages: `options.sandbox`, `"sandbox" in statecraft.config.json`). */
export function resolveSandbox(option: unknown, where = "options.sandbox"): ResolvedSandbox {
  if (option === undefined) return DEFAULT_SANDBOX;
  const fail = (what: string) => new AgentError("INVALID_OPTIONS", `${where}${what}; it takes ${SHAPE}`);
  if (typeof option === "string") {
    if (!MODES.includes(option as SandboxMode)) throw fail(` is ${JSON.stringify(option)}`);
    return { ...DEFAULT_SANDBOX, mode: option as SandboxMode };
  }
  if (option === null || typeof option !== "object" || Array.isArray(option)) throw fail(` is ${JSON.stringify(option)}`);
  const o = option as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.includes(key)) throw fail(`.${key} is not a setting`);
  if (o.mode !== undefined && !MODES.includes(o.mode as SandboxMode)) throw fail(`.mode is ${JSON.stringify(o.mode)}`);
  return {
    mode: (o.mode as SandboxMode | undefined) ?? "auto",
    network: checkNetwork(o.network, fail),
    hide: checkStrings(o.hide, ".hide", fail),
    env: checkEnv(o.env, fail),
  };
}

function checkNetwork(network: unknown, fail: (what: string) => AgentError): SandboxNetwork {
  if (network === undefined || network === "none") return "none";
  if (network === "host") return "host";
  if (network === null || typeof network !== "object" || Array.isArray(network) || !Array.isArray((network as { allow?: unknown }).allow)) {
    throw fail(`.network is ${JSON.stringify(network)}`);
  }
  const extra = Object.keys(network).filter((k) => k !== "allow");
  if (extra.length > 0) throw fail(`.network.${extra[0]} is not a setting`);
  const allow = checkStrings((network as { allow: unknown }).allow, ".network.allow", fail);
  for (const entry of allow) {
    if (!ALLOW_ENTRY.test(entry)) throw fail(`.network.allow has ${JSON.stringify(entry)}, which is no host, "*.domain" or "host:port"`);
    const port = /:(\d+)$/.exec(entry)?.[1];
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw fail(`.network.allow has ${JSON.stringify(entry)}, whose port is out of range`);
  }
  return { allow };
}

function checkStrings(value: unknown, key: string, fail: (what: string) => AgentError): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v.trim() !== "")) throw fail(`${key} must be an array of non-empty strings, got ${JSON.stringify(value)}`);
  return [...(value as string[])];
}

function checkEnv(env: unknown, fail: (what: string) => AgentError): ResolvedSandbox["env"] {
  if (env === undefined) return { pass: [], set: {} };
  if (env === null || typeof env !== "object" || Array.isArray(env)) throw fail(`.env is ${JSON.stringify(env)}`);
  const e = env as Record<string, unknown>;
  for (const key of Object.keys(e)) if (key !== "pass" && key !== "set") throw fail(`.env.${key} is not a setting`);
  const pass = checkStrings(e.pass, ".env.pass", fail);
  for (const name of pass) if (!ENV_NAME.test(name)) throw fail(`.env.pass has ${JSON.stringify(name)}, which is no variable name`);
  const set: Record<string, string> = {};
  if (e.set !== undefined) {
    if (e.set === null || typeof e.set !== "object" || Array.isArray(e.set)) throw fail(`.env.set is ${JSON.stringify(e.set)}`);
    for (const [name, value] of Object.entries(e.set)) {
      if (!ENV_NAME.test(name)) throw fail(`.env.set has ${JSON.stringify(name)}, which is no variable name`);
      if (typeof value !== "string") throw fail(`.env.set.${name} must be a string`);
      set[name] = value;
    }
  }
  return { pass, set };
}
