import { timingSafeEqual } from "../util/node-crypto.js";
import { hmacSha256Hex } from "../util/hmac-sha256.js";
import { runRecordProblem, signRun, verifyRun, type StoredRun } from "./run-store.js";

/**
 * The stored run's file format: JSON Lines. The first line is the whole run, signed (a suspended run is that one line:
 * one JSON object). While a run goes on, each checkpoint appends one line with what changed: every field but the
 * conversation, and the conversation from `from` on (`add`). A checkpoint costs what changed, not the conversation.
 *
 * Each appended line is signed over the previous line's signature and its own text, so lines can't be edited,
 * dropped from the middle or reordered without the key. A last line without its newline is a write the process
 * died in: it is not part of the run (the checkpoint before it is).
 */

const SIGNATURE_PREFIX = "hmac-sha256:";
/** `{"sig":"hmac-sha256:<64 hex>",` — the head of every appended line. */
const LINE_HEAD = `{"sig":"${SIGNATURE_PREFIX}`;
const HEAD_LENGTH = LINE_HEAD.length + 64 + 2;

/** The fields a checkpoint line carries (all but those fixed for the run and the conversation; `batch` if it changed). */
export type RunDelta = Omit<StoredRun, "v" | "sessionId" | "runId" | "cwd" | "settings" | "messages" | "batch"> & { batch?: StoredRun["batch"]; from: number; add: unknown[] };

/** The first line: the whole run, and its signature (which the next line's signature goes on from). */
export function baseLine(key: Buffer, run: StoredRun): { line: string; sig: string; batch: string } {
  const sig = signRun(key, run);
  return { line: JSON.stringify({ ...run, sig }) + "\n", sig, batch: JSON.stringify(run.batch) };
}

/**
 * A checkpoint line: what changed since the line before, whose signature is `previous`. The batch is left out when
 * it is the same as the line before's (`lastBatch`, its JSON): a closed batch stays in the run until the next
 * response, while its results are in the conversation already.
 */
export function deltaLine(key: Buffer, previous: string, run: StoredRun, from: number, lastBatch: string | undefined): { line: string; sig: string; batch: string } {
  const batch = JSON.stringify(run.batch);
  const delta: Omit<RunDelta, "batch"> = {
    status: run.status,
    at: run.at,
    since: run.since,
    activeMs: run.activeMs,
    traceSeq: run.traceSeq,
    turn: run.turn,
    toolCallCount: run.toolCallCount,
    usage: run.usage,
    batchState: run.batchState,
    call: run.call,
    inbox: run.inbox,
    pending: run.pending,
    started: run.started,
    from,
    add: run.messages.slice(from),
  };
  const fields = JSON.stringify(delta);
  const body = batch === lastBatch ? fields : `{"batch":${batch},${fields.slice(1)}`;
  const sig = SIGNATURE_PREFIX + chainMac(key, previous, body);
  return { line: `{"sig":"${sig}",${body.slice(1)}\n`, sig, batch };
}

/** Per key, its HMAC (keys are kept by the store for the run's lines; a run appends a line every few steps). */
const macs = new WeakMap<Buffer, (text: string) => string>();

function chainMac(key: Buffer, previous: string, body: string): string {
  let mac = macs.get(key);
  if (!mac) macs.set(key, (mac = hmacSha256Hex(key)));
  return mac(`${previous}\n${body}`);
}

/** What a stored run's file holds: the run its lines add up to, or why it can't be trusted. */
export type ReadJournal = { run: StoredRun; sig: string; messages: number } | { problem: string };

/** Reads a stored run's text: checks the first line's signature and every appended line's, and folds them. */
export function readJournal(text: string, key: Buffer | undefined): ReadJournal {
  // The first line is written whole (a new file renamed into place); an appended line is whole when its newline is
  // there: what follows the last newline is a write the process died in.
  const lines = text.split("\n");
  if (lines.length > 1) lines.pop();
  let parsed: unknown;
  try {
    parsed = JSON.parse(lines[0] ?? "");
  } catch (error) {
    return { problem: `it is not JSON (${(error as Error).message})` };
  }
  const { sig, ...base } = (parsed ?? {}) as Record<string, unknown>;
  const problem = runRecordProblem(base);
  if (problem) return { problem };
  if (!key || !verifyRun(key, base as unknown as StoredRun, sig)) {
    return { problem: "its signature does not match (it was changed outside statecraft, or signed with another session key)" };
  }
  const run = base as unknown as StoredRun;
  let previous = sig as string;
  const messages = [...run.messages];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const given = line.startsWith(LINE_HEAD) && line[HEAD_LENGTH - 2] === '"' && line[HEAD_LENGTH - 1] === "," ? line.slice(LINE_HEAD.length - SIGNATURE_PREFIX.length, HEAD_LENGTH - 2) : undefined;
    const body = `{${line.slice(HEAD_LENGTH)}`;
    if (given === undefined || !sameMac(given, chainMac(key, previous, body))) {
      return { problem: `its line ${i + 1} is not signed in order (it was changed, removed or moved outside statecraft)` };
    }
    let delta: RunDelta;
    try {
      delta = JSON.parse(body) as RunDelta;
    } catch (error) {
      return { problem: `its line ${i + 1} is not JSON (${(error as Error).message})` };
    }
    if (!Number.isInteger(delta.from) || delta.from < 0 || delta.from > messages.length || !Array.isArray(delta.add)) {
      return { problem: `its line ${i + 1} does not follow the conversation before it` };
    }
    messages.length = delta.from;
    for (const message of delta.add) messages.push(message);
    const { from: _from, add: _add, ...fields } = delta;
    Object.assign(run, fields);
    previous = given;
  }
  run.messages = messages;
  const folded = runRecordProblem(run);
  if (folded) return { problem: folded };
  return { run, sig: previous, messages: messages.length };
}

function sameMac(given: string, expectedHex: string): boolean {
  const bytes = Buffer.from(given.slice(SIGNATURE_PREFIX.length), "hex");
  const expected = Buffer.from(expectedHex, "hex");
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}
