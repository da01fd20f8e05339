import { PERMISSION_MODES, type PermissionMode } from "../permissions/types.js";

/** A fork's permission settings, before the terminal's `onAsk` is added. */
export interface ForkPermissionSettings {
  mode?: PermissionMode;
  allow: string[];
  ask: string[];
  deny: string[];
}

/**
 * The fork's permissions: the command line's (flags, the folder's config as far as it is trusted, the user's config),
 * never the recorded mode or allow rules, since a trace can come from anywhere and say `bypassPermissions`. Those are
 * shown, not applied. Without permission flags the recorded ask and deny rules still apply: they only restrict.
 */
export function forkPermissions(
  resolved: ForkPermissionSettings,
  flags: { permissionMode?: PermissionMode; allow?: string[]; ask?: string[]; deny?: string[] },
  recorded: { mode: string; allow: string[]; ask: string[]; deny: string[] } | undefined,
): { base: ForkPermissionSettings; recordedNote?: string } {
  const flagsGiven = flags.permissionMode !== undefined || flags.allow || flags.ask || flags.deny;
  const base: ForkPermissionSettings = {
    ...(resolved.mode !== undefined ? { mode: resolved.mode } : {}),
    allow: resolved.allow,
    ask: [...resolved.ask, ...(!flagsGiven && recorded ? recorded.ask : [])],
    deny: [...resolved.deny, ...(!flagsGiven && recorded ? recorded.deny : [])],
  };
  if (!recorded) return { base };
  // Quoted as JSON: the trace's text reaches the terminal, and JSON escapes control characters.
  const known = (PERMISSION_MODES as readonly string[]).includes(recorded.mode);
  const notApplied = [
    ...(recorded.mode !== (base.mode ?? "default")
      ? [`mode ${JSON.stringify(recorded.mode)}${known ? ` (give --permission-mode ${recorded.mode} to use it)` : ""}`]
      : []),
    ...(recorded.allow.some((rule) => !base.allow.includes(rule))
      ? [`allow ${recorded.allow.map((rule) => JSON.stringify(rule)).join(", ")} (give --allow <rule> to use one)`]
      : []),
  ];
  if (notApplied.length === 0) return { base };
  return { base, recordedNote: `the recorded run's permissions are not applied: ${notApplied.join("; ")}` };
}

