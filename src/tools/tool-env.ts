import { scrubEnvironment, type ScrubOptions } from "../sandbox/env.js";

/**
 * The environment the processes tools start get: this process's, less what a host said the agent must never see.
 * A statecraft/dbos worker holds its database's URL and its run key in its environment; a prompt-injected `bash`
 * call that could read them could rewrite the runs it waits on. Hidden by name (exact, or a prefix such as `PG`)
 * and by value (a variable holding a password under another name is dropped too). Process-wide: a worker is one
 * per process, and whatever else runs tools there should not see them either.
 */
const hiddenNames = new Set<string>();
const hiddenPrefixes = new Set<string>();
const hiddenValues = new Set<string>();
const hiddenPatterns: RegExp[] = [];
const hiddenPaths = new Set<string>();

export interface HiddenFromTools {
  /** Variable names dropped. */
  names?: Iterable<string>;
  /** Name prefixes dropped (`PG` drops PGPASSWORD, PGHOST, …). */
  prefixes?: Iterable<string>;
  /** Values that no variable passed on may contain (a password, a key); shorter than 6 characters are ignored. */
  values?: Iterable<string>;
  /** Values dropped when they match (`/^postgres(ql)?:\/\//i`: any database URL, under any name). */
  valuePatterns?: Iterable<RegExp>;
  /** Files the sandbox hides from every process a run starts (a worker's `--database-file`). */
  files?: Iterable<string>;
}

export function hideFromTools(hidden: HiddenFromTools): void {
  for (const name of hidden.names ?? []) hiddenNames.add(name);
  for (const prefix of hidden.prefixes ?? []) hiddenPrefixes.add(prefix);
  for (const value of hidden.values ?? []) if (value.length >= 6) hiddenValues.add(value);
  for (const pattern of hidden.valuePatterns ?? []) hiddenPatterns.push(pattern);
  for (const file of hidden.files ?? []) hiddenPaths.add(file);
}

/**
 * What a tool passes to a process it starts: `base` (default `process.env`) scrubbed of what looks secret (keys,
 * tokens, passwords, credentials, URLs with credentials, STATECRAFT_*, DBOS_*, PG*, AWS_*, provider keys;
 * src/sandbox/env.ts), with the run's `sandbox.env` (`pass`, `set`) applied, and never a variable a host hid: `pass`
 * does not lift those.
 */
export function toolEnv(base: NodeJS.ProcessEnv = process.env, settings: ScrubOptions = {}): NodeJS.ProcessEnv {
  const scrubbed = scrubEnvironment(base, settings);
  if (hiddenNames.size === 0 && hiddenPrefixes.size === 0 && hiddenValues.size === 0 && hiddenPatterns.length === 0) return scrubbed;
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(scrubbed)) {
    if (hiddenNames.has(name) || [...hiddenPrefixes].some((p) => name.startsWith(p))) continue;
    if (value !== undefined && ([...hiddenValues].some((v) => value.includes(v)) || hiddenPatterns.some((p) => p.test(value)))) continue;
    env[name] = value;
  }
  return env;
}

/** Files a host hid from tools (a worker's database file): the sandbox mounts nothing of them. */
export function hiddenFiles(): readonly string[] {
  return [...hiddenPaths];
}
