import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import type { Message } from "../models/messages.js";
import { agentFolder } from "./agent-folder.js";
import { existingSessionKey, sessionKeyPath, lineSigner, type LineSigner } from "./session-key.js";
import { fileBlobStore, type BlobStore } from "./blobs.js";
import { messageFromBlobs, messagesFromBlobs } from "./blob-parts.js";

/** One line of `.agent/sessions/<sessionId>.jsonl`. */
export type TranscriptEntry =
  | { type: "message"; time: string; message: Message }
  /**
   * An allow rule an `allow_always` answer added; it holds for later runs of the session.
   */
  | { type: "allow_rule"; time: string; rule: string }
  | { type: "compaction"; time: string; summary: string }
  /** The history was replaced (compaction, prepareNextTurn): these messages are the conversation from here on. */
  | { type: "reset"; time: string; messages: Message[] };

export function transcriptPath(cwd: string, sessionId: string): string {
  return join(agentFolder(cwd), "sessions", `${sessionId}.jsonl`);
}

export interface LoadedTranscript {
  messages: Message[];
  /** The allow rules the engine signed; forged or copied ones are left out (and named in `ignored`). */
  allowRules: string[];
  /** One warning per line that was ignored because the engine did not write it. */
  ignored: string[];
}

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A session id becomes a file name: only safe characters. */
export function checkSessionId(sessionId: string): void {
  if (!SESSION_ID.test(sessionId) || sessionId === "." || sessionId === "..") {
    throw new AgentError(
      "INVALID_OPTIONS",
      `sessionId ${JSON.stringify(sessionId)} is not valid: use 1-128 letters, digits, ".", "_" or "-"`,
    );
  }
}

/** Why a line is not taken, for warnings. */
const NOT_IN_CHAIN =
  "the engine did not write it there (its signature is missing or wrong, or does not follow the line before it: it was " +
  "edited, forged, copied from another session or folder, moved or replayed, or a line before it was removed)";

/** One line of a transcript file as read: its entry when it is JSON, and whether it is the engine's, in order. */
interface ReadLine {
  number: number;
  entry: TranscriptEntry;
  why?: string;
}

/**
 * Walks a transcript's lines, checking each signature against the line before it that checked (the chain's head).
 * Lines signed one by one, by versions before lines were chained, are taken only before the first chained line (a
 * session written by an older version and continued by this one); their order can't be checked. Returns the lines
 * and the head the next line written chains to.
 */
function readChain(file: string, text: string, signer: () => LineSigner | Error): { lines: ReadLine[]; head: string; unchained: number } {
  const out: ReadLine[] = [];
  let head = "";
  let chained = false;
  let unchained = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "") continue;
    let entry: TranscriptEntry;
    try {
      entry = JSON.parse(line) as TranscriptEntry;
    } catch {
      if (i >= lines.length - 2) break; // torn last line
      throw new AgentError("INVALID_OPTIONS", `transcript ${file} line ${i + 1} is not valid JSON; fix or remove that line`);
    }
    const s = signer();
    if (s instanceof Error) {
      out.push({ number: i + 1, entry, why: s.message });
      continue;
    }
    if (s.verify(line, head)) {
      chained = true;
    } else if (!chained && s.verifyUnchained(line)) {
      unchained++;
    } else {
      out.push({ number: i + 1, entry, why: NOT_IN_CHAIN });
      continue;
    }
    head = s.signatureOf(line)!;
    out.push({ number: i + 1, entry });
  }
  return { lines: out, head, unchained };
}

function signerFor(cwd: string, sessionId: string): () => LineSigner | Error {
  let signer: LineSigner | Error | undefined;
  return () => {
    if (signer === undefined) {
      try {
        const key = existingSessionKey();
        signer = key ? lineSigner(key, cwd, sessionId) : new Error(`no session key exists (${sessionKeyPath()}), so the engine signed nothing`);
      } catch (error) {
        signer = error as Error;
      }
    }
    return signer;
  };
}

/**
 * The signature the next line of a session's transcript chains to: its last line the engine wrote, in order ("" for
 * a new file). Read by a writer before its first line.
 */
export function transcriptHead(cwd: string, sessionId: string, signer: LineSigner): string {
  const file = transcriptPath(cwd, sessionId);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return "";
  }
  try {
    return readChain(file, text, () => signer).head;
  } catch {
    // A damaged line in the middle: loading the session reports it; the head is the last line that checked.
    return "";
  }
}

/**
 * Reads a session's conversation. A missing file is a new session. A torn last line (a crash mid-write) is skipped;
 * a damaged line elsewhere is an error naming the file and line. Every line the engine writes carries its signature
 * (`sig`, the last field: session-key.ts), which covers the line before it too: a line whose signature doesn't
 * check — added or edited by something other than the engine, copied from another session or workspace, moved,
 * replayed, or after a line that was removed — is ignored, and `warn` hears about it: once per allow rule, once in
 * all for other lines. Lines an older version signed one by one are read when they come first (and `warn` says their
 * order is unchecked); new lines chain on from them. Images and files are read back from the workspace's
 * `.agent/blobs/` (or `blobs`), each checked against its hash: a missing or changed one is `BLOB_NOT_FOUND` or
 * `BLOB_DAMAGED`, naming the file.
 */
export function loadTranscript(cwd: string, sessionId: string, warn?: (message: string) => void, blobs: BlobStore = fileBlobStore(cwd)): LoadedTranscript {
  const file = transcriptPath(cwd, sessionId);
  const loaded: LoadedTranscript = { messages: [], allowRules: [], ignored: [] };
  if (!existsSync(file)) return loaded;
  const ignore = (message: string) => {
    loaded.ignored.push(message);
    warn?.(message);
  };
  const otherIgnored: number[] = [];
  let otherWhy = "";
  const read = readChain(file, readFileSync(file, "utf8"), signerFor(cwd, sessionId));
  for (const { number, entry, why } of read.lines) {
    if (why !== undefined) {
      if (entry.type === "allow_rule") {
        ignore(`${file} line ${number}: allow rule ${JSON.stringify(entry.rule)} ignored: ${why}; answer allow_always again to keep it`);
      } else {
        otherIgnored.push(number);
        otherWhy = why;
      }
      continue;
    }
    applyEntry(loaded, entry, blobs, `${file} line ${number}`);
  }
  if (otherIgnored.length > 0) {
    const shown = otherIgnored.slice(0, 10).join(", ") + (otherIgnored.length > 10 ? ", …" : "");
    ignore(`${file}: ${otherIgnored.length} line${otherIgnored.length === 1 ? "" : "s"} of the conversation ignored (line${otherIgnored.length === 1 ? "" : "s"} ${shown}): ${otherWhy}`);
  }
  if (read.unchained > 0) {
    warn?.(`${file}: its first ${read.unchained} line${read.unchained === 1 ? " was" : "s were"} signed one by one by an older statecraft: read as before, but their order can't be checked; lines written from now on are chained`);
  }
  return loaded;
}

/** What one transcript entry does to the conversation read so far; images and files are read back from `blobs`. */
function applyEntry(loaded: LoadedTranscript, entry: TranscriptEntry, blobs: BlobStore | undefined, where: string): void {
  if (entry.type === "message") loaded.messages.push(messageFromBlobs(entry.message, blobs, where));
  else if (entry.type === "allow_rule" && typeof entry.rule === "string") loaded.allowRules.push(entry.rule);
  else if (entry.type === "reset") loaded.messages = [...messagesFromBlobs(entry.messages, blobs, where)];
}

/**
 * Reads a conversation the engine kept in memory (`store: "memory"`): its own lines, never on disk, so none is signed
 * or checked. `blobs`: where its images and files are (the memory store's); lines that hold them inline need none.
 */
export function transcriptFromLines(lines: readonly string[], blobs?: BlobStore): LoadedTranscript {
  const loaded: LoadedTranscript = { messages: [], allowRules: [], ignored: [] };
  lines.forEach((line, i) => applyEntry(loaded, JSON.parse(line) as TranscriptEntry, blobs, `the session's line ${i + 1}`));
  return loaded;
}

/** Conversation history fit to send again: cut-off assistant messages keep their text but lose unrun tool calls. */
export function historyForModel(messages: readonly Message[]): Message[] {
  return messages.map((m) => {
    if (m.role === "assistant" && m.cutOff && m.toolCalls) {
      const { toolCalls: _dropped, ...rest } = m;
      return rest;
    }
    return m;
  });
}
