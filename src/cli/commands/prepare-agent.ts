import type { AnyTool } from "../../tools/define-tool.js";
import { builtinTools } from "../../tools/builtin/index.js";
import type { Style } from "../colors.js";
import { resolveRunSettings, type RunSettings } from "../config.js";
import type { CliIO } from "../io.js";
import type { Logger } from "../logger.js";
import { createModel, type CreatedModel } from "../model-factory.js";
import { traceFileOf, type RunParameters } from "../run-agent.js";
import type { RunFlags } from "../run-flags.js";
import { checkTraceTarget } from "../trace-target.js";

export interface PreparedAgent {
  settings: RunSettings;
  params: RunParameters;
  created: CreatedModel;
  tools: AnyTool[];
}

/**
 * Everything `run` and `chat` need before the first model call: settings from flags, environment and config file
 * (a missing model fails here, at once), the model, a trace file that can be written, and the built-in tools.
 */
export async function prepareAgent(flags: RunFlags, io: CliIO, logger: Logger): Promise<PreparedAgent> {
  const settings = resolveRunSettings(flags, io.env, io.cwd);
  // What an untrusted project asked for and did not get is said, never dropped silently.
  for (const warning of settings.warnings) io.stderr.write(`statecraft: ${warning}\n`);
  logger.debug(
    {
      cwd: settings.cwd,
      model: settings.model.kind === "script" ? { script: settings.model.file } : { model: settings.model.model, baseURL: settings.model.baseURL, source: settings.model.source },
      configFile: settings.configFile,
    },
    "settings resolved",
  );
  const created = await createModel(settings.model, logger);
  const { model: _model, configFile: _configFile, warnings: _warnings, ...params } = settings;
  const traceFile = traceFileOf(params);
  if (traceFile !== false) checkTraceTarget(traceFile);
  return { settings, params, created, tools: builtinTools() };
}

/** The dim line at the top of human output: which model, where, with which permissions. */
export function headerLine(style: Style, prepared: PreparedAgent): string {
  const { settings, created } = prepared;
  const parts = [
    "statecraft",
    `model ${created.description}${
      created.nameFrom === "server" ? " (the server's first model; set STATECRAFT_MODEL to choose)" : created.nameFrom === "default" ? " (the default; set STATECRAFT_MODEL to choose)" : ""
    }`,
    `cwd ${settings.cwd}`,
    `permissions ${settings.permissions.mode ?? "default"}`,
  ];
  if (settings.sessionId !== undefined) parts.push(`session ${settings.sessionId}`);
  return style.dim(parts.join(" · "));
}
