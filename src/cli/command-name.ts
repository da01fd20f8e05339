import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * How a person types the command in the hints the CLI prints: `statecraft` when an executable of that name is on
 * PATH (installed globally, or run from a shell that has node_modules/.bin on PATH), else `npx statecraft`, which
 * finds the project's copy after `npm install` / `npm ci` without a global install.
 */
export function commandName(env: NodeJS.ProcessEnv): string {
  return onPath("statecraft", env) ? "statecraft" : "npx statecraft";
}

/** Whether PATH holds an executable file `name` (on Windows, `name` with one of PATHEXT's endings). */
function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  const folders = (env.PATH ?? env.Path ?? "").split(delimiter).filter((folder) => folder !== "");
  const endings = process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT;.COM").split(";") : [""];
  return folders.some((folder) => endings.some((ending) => isExecutable(join(folder, name + ending))));
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
