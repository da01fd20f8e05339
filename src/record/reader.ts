import { createReadStream, statSync } from "node:fs";
import { AgentError } from "../errors/agent-error.js";
import { isUnknownTraceLine, TRACE_VERSION, type AnyTraceLine, type TraceLine, type UnknownTraceLine } from "./format.js";

export interface ReadTraceOptions {
  /**
   * Where warnings go: a torn last line, a damaged or foreign line (skipped), a newer format version.
   * Default: one line each on stderr, prefixed `statecraft:`.
   */
  onWarning?: (message: string) => void;
  /**
   * Only lines of this session. Lines that cannot mention it are skipped before they are parsed, which makes reading
   * one session of a large file cheap.
   */
  sessionId?: string;
  /**
   * Keep lines of kinds this version does not know (written by a later one), typed `UnknownTraceLine`; default
   * false: they are skipped, so that every line read is a `TraceLine` that narrows on `kind`.
   */
  unknownKinds?: boolean;
}

export const warnOnStderr = (message: string): void => {
  process.stderr.write(`statecraft: ${message}\n`);
};

/**
 * Reads a trace file line by line: an async iterable of trace lines, in file order, streamed through `readline` (a
 * large trace is never held in memory). Many sessions may be interleaved in one file; `seq` numbers each session's
 * run. Lines of older format versions are accepted, unknown fields are kept and ignored. A torn last line (a crash
 * mid-write) is skipped with a warning; so is a damaged line elsewhere, naming its line number.
 * A missing file is an `AgentError` (`TRACE_NOT_FOUND`). Lines of kinds this version does not know are skipped unless
 * `unknownKinds: true` (then `isUnknownTraceLine(line)` tells them apart).
 */
export function readTrace(file: string, options?: ReadTraceOptions & { unknownKinds?: false }): AsyncGenerator<TraceLine, void, undefined>;
export function readTrace(file: string, options: ReadTraceOptions & { unknownKinds: true }): AsyncGenerator<AnyTraceLine, void, undefined>;
export function readTrace(file: string, options?: ReadTraceOptions): AsyncGenerator<AnyTraceLine, void, undefined>;
export async function* readTrace(file: string, options: ReadTraceOptions = {}): AsyncGenerator<AnyTraceLine, void, undefined> {
  const warn = options.onWarning ?? warnOnStderr;
  checkTraceFile(file);
  // node:readline is loaded by the first read, not by `import "statecraft"`.
  const { createInterface } = await import("node:readline");
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 64 * 1024 });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const wanted = options.sessionId === undefined ? undefined : JSON.stringify(options.sessionId).slice(1, -1);
  let number = 0;
  // A line that did not parse is reported once we know whether it was the last one (torn) or not (damaged).
  let unparsed: number | undefined;
  let newerWarned = false;
  try {
    for await (const text of lines) {
      number++;
      if (text.trim() === "") continue;
      if (unparsed !== undefined) {
        warn(`${file}:${unparsed}: line is damaged (not valid JSON); skipped`);
        unparsed = undefined;
      }
      if (wanted !== undefined && !text.includes(wanted)) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        unparsed = number;
        continue;
      }
      const line = asTraceLine(value);
      if (!line) {
        warn(`${file}:${number}: not a trace line (it needs "sessionId", "seq" and "kind"); skipped`);
        continue;
      }
      if (wanted !== undefined && line.sessionId !== options.sessionId) continue;
      if (!options.unknownKinds && isUnknownTraceLine(line)) continue;
      if (line.v > TRACE_VERSION && !newerWarned) {
        newerWarned = true;
        warn(`${file}:${number}: written by a newer statecraft (trace format v${line.v}, this one reads up to v${TRACE_VERSION}); fields it does not know are ignored`);
      }
      yield upgrade(line);
    }
    if (unparsed !== undefined) warn(`${file}:${unparsed}: the last line is torn (the writer stopped mid-line, e.g. a crash); skipped`);
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** A clear error for a trace path that is not a readable file. */
export function checkTraceFile(file: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new AgentError("TRACE_NOT_FOUND", `trace file ${file} does not exist; runs write one to <cwd>/.agent/trace.jsonl unless told otherwise`);
  }
  if (!isFile) throw new AgentError("TRACE_NOT_FOUND", `trace file ${file} is not a file; give the path of a trace (JSONL)`);
}

/** The value as a trace line when it has the fields every line carries; a missing `v` is the first version. */
function asTraceLine(value: unknown): AnyTraceLine | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const line = value as Record<string, unknown>;
  if (typeof line.sessionId !== "string" || line.sessionId === "") return undefined;
  if (typeof line.seq !== "number" || !Number.isInteger(line.seq) || line.seq < 0) return undefined;
  if (typeof line.kind !== "string") return undefined;
  if (line.v === undefined) line.v = 1;
  else if (typeof line.v !== "number") return undefined;
  if (typeof line.time !== "string") line.time = "";
  return line as unknown as AnyTraceLine;
}

/**
 * Brings a line of an older format version to the current one. Version 1 is the first, so there is nothing to do
 * yet; a later version that renames or reshapes a field converts older lines here, so every reader sees one shape.
 */
function upgrade<L extends TraceLine | UnknownTraceLine>(line: L): L {
  return line;
}
