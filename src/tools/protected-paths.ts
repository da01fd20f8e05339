import fs from "node:fs";
import path from "node:path";
import { statecraftFolders, statecraftHome } from "../util/statecraft-home.js";
import { AGENT_DIR } from "../record/agent-folder.js";
import { expandHome, isWithin, resolveRealPath } from "./confine.js";

export { AGENT_DIR };
/** The project config file the CLI reads from its working folder (mode, rules, model). */
export const PROJECT_CONFIG_FILE = "statecraft.config.json";
/** The project's MCP server list: each server is a command the CLI starts in a trusted folder. */
export const PROJECT_MCP_FILE = ".mcp.json";

/**
 * Rule texts recorded when a protected path refuses a write. They are built in: no permission mode
 * (`bypassPermissions` included) and no allow rule overrides them. Both names are matched at any depth, since any
 * folder of a workspace can be the working folder of a later run.
 */
export const PROTECTED_RULES = {
  agentDir: `protected(**/${AGENT_DIR}/**)`,
  projectConfig: `protected(**/${PROJECT_CONFIG_FILE})`,
  mcpConfig: `protected(**/${PROJECT_MCP_FILE})`,
} as const;

/** The rule text protecting the statecraft folder (the session-signing key lives there). */
export function homeRule(home: string = statecraftHome()): string {
  return `protected(${home}/**)`;
}

/** Entries looked at when matching a hard link against `.agent/`; a larger folder is only partly compared. */
const MAX_ENTRIES = 10_000;

/** The rule protecting `absolute` by name (no symlinks followed, no hard links compared), if any. */
function ruleByName(absolute: string, roots: readonly string[], home: string): string | undefined {
  if (isWithin(home, absolute)) return homeRule(home);
  const root = roots.find((r) => isWithin(r, absolute));
  const below = root === undefined ? absolute : path.relative(root, absolute);
  // Lower case: on a case-insensitive file system `.AGENT/x` is `.agent/x`.
  const parts = below.split(path.sep).filter((part) => part !== "").map((part) => part.toLowerCase());
  if (parts.includes(AGENT_DIR)) return PROTECTED_RULES.agentDir;
  if (parts[parts.length - 1] === PROJECT_CONFIG_FILE) return PROTECTED_RULES.projectConfig;
  if (parts[parts.length - 1] === PROJECT_MCP_FILE) return PROTECTED_RULES.mcpConfig;
  return undefined;
}

function realOrSelf(absolute: string): string {
  try {
    return resolveRealPath(absolute);
  } catch {
    return absolute;
  }
}

/**
 * A hard link shares its inode with the file it links: `notes.txt` made with `ln .agent/audit.jsonl notes.txt` is
 * the audit log under another name. Compares the existing file's inode with the protected files of each root.
 */
function ruleByInode(real: string, roots: readonly string[], home: string): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(real);
  } catch {
    return undefined;
  }
  if (!stat.isFile() || stat.nlink < 2) return undefined;
  const same = (file: string) => {
    try {
      const other = fs.statSync(file);
      return other.ino === stat.ino && other.dev === stat.dev;
    } catch {
      return false;
    }
  };
  const seen = { count: 0 };
  if (anyFileUnder(home, same, seen)) return homeRule(home);
  for (const root of roots) {
    if (same(path.join(root, PROJECT_CONFIG_FILE))) return PROTECTED_RULES.projectConfig;
    if (same(path.join(root, PROJECT_MCP_FILE))) return PROTECTED_RULES.mcpConfig;
    if (anyFileUnder(path.join(root, AGENT_DIR), same, seen)) return PROTECTED_RULES.agentDir;
  }
  return undefined;
}

function anyFileUnder(dir: string, test: (file: string) => boolean, seen: { count: number }): boolean {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (++seen.count > MAX_ENTRIES) return false;
    const file = path.join(dir, entry.name);
    if (entry.isFile() && test(file)) return true;
    if (entry.isDirectory() && anyFileUnder(file, test, seen)) return true;
  }
  return false;
}

/** The statecraft folders as written and as real paths (a symlinked `~/.config` still protects what it leads to). */
function homeFolders(): string[] {
  const folders = statecraftFolders();
  return [...new Set([...folders, ...folders.map(realOrSelf)])];
}

/**
 * The rule that keeps a write away from `input`, if one does: the path as written, the file it really is (symlinks
 * followed) and, for an existing file with several names, the file it shares its inode with. `roots` are the
 * workspace root and any additional directories (real paths); `.agent/`, `statecraft.config.json` and `.mcp.json`
 * are matched below them, the statecraft folders (`STATECRAFT_HOME`, the user config folder) wherever they are.
 */
export function protectedRuleFor(input: string, cwd: string, roots: readonly string[] = [realOrSelf(path.resolve(cwd))]): string | undefined {
  const lexical = path.resolve(cwd, expandHome(input === "" ? "." : input));
  const real = realOrSelf(lexical);
  const lexicalRoots = [path.resolve(cwd), ...roots];
  const homes = homeFolders();
  for (const h of homes) {
    const rule = ruleByName(lexical, lexicalRoots, h) ?? ruleByName(real, roots, h);
    if (rule) return rule;
  }
  for (const h of homes) {
    const rule = ruleByInode(real, roots, h);
    if (rule) return rule;
  }
  return undefined;
}

/**
 * The statecraft folder rule protecting `input` from every tool, readers included (the session key signs allow
 * rules; the user config and trust list decide later runs' modes), if it names something in one.
 */
export function homeRuleFor(input: string, cwd: string): string | undefined {
  const lexical = path.resolve(cwd, expandHome(input === "" ? "." : input));
  const real = realOrSelf(lexical);
  for (const h of homeFolders()) {
    if (isWithin(h, lexical) || isWithin(h, real)) return homeRule(h);
  }
  return undefined;
}

/** Why a protected path is refused, for reasons shown to people and models. */
export const PROTECTED_WHY =
  `the engine's own state (${AGENT_DIR}/), the project config (${PROJECT_CONFIG_FILE}), the project's MCP servers ` +
  `(${PROJECT_MCP_FILE}) and the statecraft folders (session key, user config, trusted folders) ` +
  "are protected paths that tools never write (nor read, for the statecraft folders), in every permission mode " +
  "(bypassPermissions included); write somewhere else, and leave changes to these files to a person";

/** The refusal a write tool returns for a protected path: names the rule, and why no mode lifts it. */
export function protectedPathMessage(tool: string, shown: string, rule: string): string {
  return `${tool} on ${shown} is refused by rule ${rule}: ${PROTECTED_WHY}.`;
}
