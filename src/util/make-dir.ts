import { mkdirSync, statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * `mkdir -p` that fails at once instead of spinning: Node's recursive mkdirSync loops forever on a folder it can't
 * create where creating it reports ENOENT although the parent exists (`/proc/1/nope`). This walks up to the nearest
 * path that exists, checks it is a folder, then creates each missing folder below it with a plain mkdir, so every
 * failure surfaces as an error naming the folder. `mode` applies to the folders it creates, as mkdir's does.
 */
export function makeDirectory(dir: string, mode?: number): void {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    let stat: Stats | undefined;
    try {
      stat = statSync(at);
    } catch (error) {
      // ENOTDIR: something further up is a file; the walk reaches it and says so.
      if (code(error) !== "ENOENT" && code(error) !== "ENOTDIR") throw new Error(`could not create the folder ${resolve(dir)}: ${(error as Error).message}`);
    }
    if (stat) {
      if (!stat.isDirectory()) throw new Error(`could not create the folder ${resolve(dir)}: ${at} is a file, not a folder`);
      break;
    }
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) throw new Error(`could not create the folder ${resolve(dir)}: the file system root ${at} does not exist`);
    at = parent;
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder, mode === undefined ? undefined : { mode });
    } catch (error) {
      // Made meanwhile by someone else: fine if it is a folder.
      if (code(error) === "EEXIST" && statSync(folder).isDirectory()) continue;
      throw new Error(`could not create the folder ${folder}: ${(error as Error).message}`);
    }
  }
}
