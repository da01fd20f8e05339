import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import type { Message } from "../models/messages.js";
import { agentFolder } from "./agent-folder.js";
import { existingSessionKey, sessionKeyPath, lineSigner, type LineSigner } from "./session-key.js";

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

/**
 * Reads a session's conversation. A missing file is a new session. A torn last line (a crash mid-write) is skipped;
 * a damaged line elsewhere is an error naming the file and line. Every line the engine writes carries its signature
 * (`sig`, the last field: session-key.ts); a line whose signature doesn't check — added or edited by something other
 * than the engine, copied from another session or workspace, or written before lines were signed — is ignored, and
 * `warn` hears about it: once per allow rule, once in all for other lines.
 */
export function loadTranscript(cwd: string, sessionId: string, warn?: (message: string) => void): LoadedTranscript {
  const file = transcriptPath(cwd, sessionId);
  const loaded: LoadedTranscript = { messages: [], allowRules: [], ignored: [] };
  if (!existsSync(file)) return loaded;
  let signer: LineSigner | Error | undefined;
  const check = (text: string): string | undefined => {
    if (signer === undefined) {
      try {
        const key = existingSessionKey();
        signer = key ? lineSigner(key, cwd, sessionId) : new Error(`no session key exists (${sessionKeyPath()}), so the engine signed nothing`);
      } catch (error) {
        signer = error as Error;
      }
    }
    if (signer instanceof Error) return signer.message;
    return signer.verify(text) ? undefined : "the engine did not write it (its signature is missing or wrong, or it was signed for another session or folder)";
  };
  const ignore = (message: string) => {
    loaded.ignored.push(message);
    warn?.(message);
  };
  const otherIgnored: number[] = [];
  let otherWhy = "";
  const lines = readFileSync(file, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i];
    if (text.trim() === "") continue;
    let entry: TranscriptEntry;
    try {
      entry = JSON.parse(text) as TranscriptEntry;
    } catch {
      if (i >= lines.length - 2) break; // torn last line
      throw new AgentError("INVALID_OPTIONS", `transcript ${file} line ${i + 1} is not valid JSON; fix or remove that line`);
    }
    const why = check(text);
    if (why !== undefined) {
      if (entry.type === "allow_rule") {
        ignore(`${file} line ${i + 1}: allow rule ${JSON.stringify(entry.rule)} ignored: ${why}; answer allow_always again to keep it`);
      } else {
        otherIgnored.push(i + 1);
        otherWhy = why;
      }
      continue;
    }
    applyEntry(loaded, entry);
  }
  if (otherIgnored.length > 0) {
    const shown = otherIgnored.slice(0, 10).join(", ") + (otherIgnored.length > 10 ? ", …" : "");
    ignore(`${file}: ${otherIgnored.length} line${otherIgnored.length === 1 ? "" : "s"} of the conversation ignored (line${otherIgnored.length === 1 ? "" : "s"} ${shown}): ${otherWhy}`);
  }
  return loaded;
}

/** What one transcript entry does to the conversation read so far. */
function applyEntry(loaded: LoadedTranscript, entry: TranscriptEntry): void {
  if (entry.type === "message") loaded.messages.push(entry.message);
  else if (entry.type === "allow_rule" && typeof entry.rule === "string") loaded.allowRules.push(entry.rule);
  else if (entry.type === "reset") loaded.messages = [...entry.messages];
}

/**
 * Reads a conversation the engine kept in memory (`store: "memory"`): its own lines, never on disk, so none is signed
 * or checked.
 */
export function transcriptFromLines(lines: readonly string[]): LoadedTranscript {
  const loaded: LoadedTranscript = { messages: [], allowRules: [], ignored: [] };
  for (const line of lines) applyEntry(loaded, JSON.parse(line) as TranscriptEntry);
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
