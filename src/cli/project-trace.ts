import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { AGENT_DIR } from "../record/agent-folder.js";
import { UsageError } from "./usage-error.js";

/** `child` is strictly below `parent` (both absolute, normalised). */
function isBelow(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== "" && rel.split(sep)[0] !== ".." && !isAbsolute(rel);
}

/**
 * Where `path` really leads: the real path of its deepest part that exists (symbolic links followed), with the rest
 * appended. Undefined when a part is a symbolic link that leads nowhere (appending to it would create its target).
 */
function realDestination(path: string): string | undefined {
  let existing = path;
  const rest: string[] = [];
  for (;;) {
    try {
      lstatSync(existing);
      break;
    } catch {
      if (dirname(existing) === existing) return undefined;
      rest.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  try {
    return join(realpathSync(existing), ...rest);
  } catch {
    return undefined;
  }
}

/**
 * The trace file a project's `statecraft.config.json` names, checked: a relative path to a file inside the project's
 * `.agent/`, which must really be there once symbolic links are followed. Otherwise a cloned repository could make
 * every run append its trace lines to ~/.bashrc. Anything else is a usage error naming `from` and how to fix it.
 */
export function checkProjectTrace(cwd: string, trace: string, from: string): string {
  const fix = `use a path inside the project's ${AGENT_DIR}/ folder like ".agent/trace.jsonl", or choose the file yourself with --trace <file> (or --no-trace)`;
  if (trace.startsWith("~") || isAbsolute(trace)) {
    throw new UsageError(`${from}: "trace" ${JSON.stringify(trace)} is outside the project; ${fix}`);
  }
  const agentDir = join(cwd, AGENT_DIR);
  const target = resolve(cwd, trace);
  if (!isBelow(agentDir, target)) throw new UsageError(`${from}: "trace" ${JSON.stringify(trace)} is not inside ${agentDir}; ${fix}`);
  checkReallyInside(cwd, target, `${from}: "trace" ${JSON.stringify(trace)}`, fix);
  return target;
}

/**
 * The default trace `<cwd>/.agent/trace.jsonl` is a path the project controls too (a committed `.agent` link, or a
 * committed `trace.jsonl` link): it must really lead inside the project's `.agent/`.
 */
export function checkDefaultTrace(cwd: string): void {
  const target = join(cwd, AGENT_DIR, "trace.jsonl");
  checkReallyInside(cwd, target, `the default trace file ${target}`, "remove the link, or choose the trace file yourself with --trace <file> (or --no-trace)");
}

function checkReallyInside(cwd: string, target: string, what: string, fix: string): void {
  const realAgentDir = join(realpathSync(cwd), AGENT_DIR);
  const real = realDestination(target);
  if (real === undefined) throw new UsageError(`${what} goes through a symbolic link that leads nowhere; ${fix}`);
  if (!isBelow(realAgentDir, real)) {
    throw new UsageError(`${what} leads to ${real} through a symbolic link, outside ${realAgentDir}; ${fix}`);
  }
}
