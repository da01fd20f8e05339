import { resolve } from "node:path";
import { loadConfigFile } from "../config.js";
import { shellQuote } from "../denial-notice.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../usage-error.js";
import { trustedFolders, trustedFoldersFile, trustFolder, untrustFolder } from "../user-config.js";

export interface TrustFlags {
  list?: boolean;
  remove?: boolean;
}

/** `statecraft trust`: adds, removes or lists trusted folders; says what trusting a folder's config file changes. */
export function trustAction(dir: string | undefined, flags: TrustFlags, context: CliContext): number {
  const { io } = context;
  const say = (text: string) => io.stdout.write(`${text}\n`);
  if (flags.list && flags.remove) throw new UsageError("--list and --remove don't go together: list, or remove one folder.");
  if (flags.list) {
    if (dir !== undefined) throw new UsageError("--list takes no folder: it prints every trusted folder.");
    const folders = trustedFolders(io.env);
    if (folders.length === 0) say(`no trusted folders (${trustedFoldersFile(io.env)})`);
    for (const folder of folders) say(folder);
    return 0;
  }
  const target = resolve(io.cwd, dir ?? ".");
  if (flags.remove) {
    const { folder, file, removed } = untrustFolder(target, io.env);
    say(removed ? `no longer trusted: ${folder} (${file})` : `${folder} was not trusted (${file})`);
    return 0;
  }
  // Read first: a broken config file is reported and nothing is recorded.
  const loaded = loadConfigFile(target);
  const { folder, file, added } = trustFolder(target, io.env);
  say(added ? `trusted ${folder} (${file})` : `${folder} is already trusted (${file})`);
  // Show what now applies, so trusting is a decision about something seen.
  const { mode, allow = [] } = loaded?.config.permissions ?? {};
  const applies = [
    // Quoted as JSON: the file's text reaches the terminal, and JSON escapes control characters.
    ...(mode !== undefined ? [`permission mode ${mode}`] : []),
    ...(allow.length > 0 ? [`allow ${allow.map((rule) => JSON.stringify(rule)).join(", ")}`] : []),
    ...(loaded?.config.baseUrl !== undefined ? [`baseUrl ${JSON.stringify(loaded.config.baseUrl)} (it gets OPENAI_API_KEY)`] : []),
  ];
  if (loaded && applies.length > 0) say(`its ${loaded.file} now applies in full: ${applies.join("; ")}`);
  say(`trust is for this folder only, not its subfolders; undo with: statecraft trust --remove ${shellQuote(folder)}`);
  return 0;
}
