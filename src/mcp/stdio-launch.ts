import path from "node:path";
import type { SandboxedCommand } from "../sandbox/index.js";
import { resolveSandbox, type SandboxOption } from "../sandbox/index.js";
import { hiddenFiles, toolEnv } from "../tools/tool-env.js";
import type { McpStdioServer } from "./config.js";

export interface StdioLaunchOptions {
  sandbox?: SandboxOption;
  workspace?: string;
  /** Said once when the server runs unsandboxed under "auto". */
  warn: (message: string) => void;
}

/**
 * How a stdio server is started: its command inside the sandbox (bubblewrap gives it a session of its own, since the
 * SDK does not), with the scrubbed environment a tool's process gets plus the server's own `env` from its config.
 * A server configured with `"sandbox": false` gets the same environment, unsandboxed.
 */
export async function stdioLaunch(config: McpStdioServer, options: StdioLaunchOptions): Promise<{ command: string; args: string[]; env: Record<string, string>; cwd?: string; release: SandboxedCommand["release"] }> {
  const settings = resolveSandbox(options.sandbox, "mcpTools options: sandbox");
  const env = { ...stringEnv(toolEnv(process.env, settings.env)), ...(config.env ?? {}) };
  const cwd = config.cwd === undefined ? undefined : path.resolve(config.cwd);
  const { sandboxCommand } = await import("../sandbox/wrap.js");
  const wrapped = await sandboxCommand({
    file: config.command,
    args: config.args ?? [],
    workspace: path.resolve(options.workspace ?? cwd ?? process.cwd()),
    cwd: cwd ?? path.resolve(options.workspace ?? process.cwd()),
    settings: config.sandbox === false ? { ...settings, mode: "off" } : settings,
    hide: hiddenFiles(),
    env,
    newSession: true,
    warn: options.warn,
  });
  return { command: wrapped.file, args: wrapped.args, env: stringEnv(wrapped.env), cwd: wrapped.cwd, release: wrapped.release };
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}
