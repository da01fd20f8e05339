import os from "node:os";
import path from "node:path";

/**
 * The user's statecraft folder, outside every workspace: `$STATECRAFT_HOME`, else `$XDG_CONFIG_HOME/statecraft`,
 * else `~/.config/statecraft`. It holds what an agent must not be able to write (the key that signs session rules),
 * so it is read from the environment each time (tests point it at a temp folder).
 */
export function statecraftHome(env: NodeJS.ProcessEnv = process.env): string {
  const own = env.STATECRAFT_HOME;
  if (own !== undefined && own !== "") return path.resolve(own);
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec ignores a relative XDG_CONFIG_HOME.
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, "statecraft");
  return path.join(os.homedir(), ".config", "statecraft");
}

/**
 * Every folder that holds the user's statecraft files: the statecraft folder above (session key) and the user config
 * folder the CLI reads (`config.json`, `trusted-folders.json`: `$XDG_CONFIG_HOME/statecraft`, else
 * `$HOME/.config/statecraft`), which differ when `STATECRAFT_HOME` is set. Both are protected from every tool.
 */
export function statecraftFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  const home = env.HOME?.trim();
  const userConfig =
    xdg && path.isAbsolute(xdg) ? path.join(xdg, "statecraft") : path.join(home && path.isAbsolute(home) ? home : os.homedir(), ".config", "statecraft");
  const own = statecraftHome(env);
  return own === userConfig ? [own] : [own, userConfig];
}
