import { existsSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { makeDirectory } from "../util/make-dir.js";
import { UsageError } from "./usage-error.js";

/** The user's own settings file in the user config folder; same keys as `statecraft.config.json`. */
export const USER_CONFIG_FILE_NAME = "config.json";
/** The folders whose `statecraft.config.json` the user trusts, in the user config folder. */
export const TRUSTED_FOLDERS_FILE_NAME = "trusted-folders.json";

/**
 * The user config folder: `$XDG_CONFIG_HOME/statecraft`, else `$HOME/.config/statecraft`. It is read from the
 * environment the command was started with (never from a project), so a cloned folder can't put itself on the list.
 */
export function userConfigDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  // The XDG spec says a relative value is to be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, "statecraft");
  const home = env.HOME?.trim();
  return join(home && isAbsolute(home) ? home : homedir(), ".config", "statecraft");
}

export function trustedFoldersFile(env: NodeJS.ProcessEnv): string {
  return join(userConfigDir(env), TRUSTED_FOLDERS_FILE_NAME);
}

/** The trusted folders (real paths), in the order they were added. A broken list is a usage error naming the file. */
export function trustedFolders(env: NodeJS.ProcessEnv): string[] {
  const file = trustedFoldersFile(env);
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${file}: is not valid JSON (${(error as Error).message}); fix it or delete it and trust your folders again with statecraft trust <dir>`);
  }
  const folders = (parsed as { folders?: unknown } | null)?.folders;
  if (!Array.isArray(folders) || folders.some((f) => typeof f !== "string")) {
    throw new UsageError(`${file}: must hold { "folders": ["/absolute/path", …] }; fix it or delete it and trust your folders again with statecraft trust <dir>`);
  }
  // Only absolute entries count: a relative one would mean a different folder wherever statecraft runs.
  return (folders as string[]).filter((f) => isAbsolute(f)).map((f) => resolve(f));
}

/** The real path of a folder that exists; a usage error naming `from` otherwise. */
export function realFolder(dir: string, from: string): string {
  if (!existsSync(dir)) throw new UsageError(`${from}: folder ${dir} does not exist`);
  if (!statSync(dir).isDirectory()) throw new UsageError(`${from}: ${dir} is not a folder`);
  return realpathSync(dir);
}

/**
 * Whether the user trusts `dir`: its real path is on the list exactly. Trust is per folder, not inherited, so
 * trusting ~/src does not trust a repository cloned into it, and a symbolic link is judged by where it leads.
 */
export function isTrustedFolder(dir: string, env: NodeJS.ProcessEnv): boolean {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return false;
  }
  return trustedFolders(env).includes(real);
}

function writeList(env: NodeJS.ProcessEnv, folders: string[]): string {
  const file = trustedFoldersFile(env);
  makeDirectory(userConfigDir(env));
  // Written whole then renamed: an interrupted write never leaves a half list behind.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ folders }, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
  return file;
}

/** Adds a folder (by its real path) to the list; `added` is false when it was already there. */
export function trustFolder(dir: string, env: NodeJS.ProcessEnv): { folder: string; file: string; added: boolean } {
  const folder = realFolder(dir, "statecraft trust");
  const folders = trustedFolders(env);
  if (folders.includes(folder)) return { folder, file: trustedFoldersFile(env), added: false };
  return { folder, file: writeList(env, [...folders, folder]), added: true };
}

/** Takes a folder off the list (by its real path, or as written when it no longer exists). */
export function untrustFolder(dir: string, env: NodeJS.ProcessEnv): { folder: string; file: string; removed: boolean } {
  let folder = resolve(dir);
  try {
    folder = realpathSync(dir);
  } catch {
    // gone already: remove the entry as written
  }
  const folders = trustedFolders(env);
  if (!folders.includes(folder)) return { folder, file: trustedFoldersFile(env), removed: false };
  return { folder, file: writeList(env, folders.filter((f) => f !== folder)), removed: true };
}
