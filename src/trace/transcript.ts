import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import type { Message } from "../models/messages.js";
import { existingSessionKey, sessionKeyPath, verifyAllowRule } from "./session-key.js";

/** One line of `.agent/sessions/<sessionId>.jsonl`. */
export type TranscriptEntry =
  | { type: "message"; time: string; message: Message }
  /**
   * An allow rule an `allow_always` answer added; it holds for later runs of the session. `sig` is its signature
   * with the user's session key (session-key.ts): a line without a valid one was not written by the engine.
   */
  | { type: "allow_rule"; time: string; rule: string; sig?: string }
  | { type: "compaction"; time: string; summary: string }
  /** The history was replaced (compaction, prepareNextTurn): these messages are the conversation from here on. */
  | { type: "reset"; time: string; messages: Message[] };

export function transcriptPath(cwd: string, sessionId: string): string {
  return join(cwd, ".agent", "sessions", `${sessionId}.jsonl`);
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
 * a damaged line elsewhere is an error naming the file and line. An `allow_rule` line whose signature doesn't check
 * (added by something other than the engine, or copied from another session or workspace) is ignored; `warn` hears
 * about each.
 */
export function loadTranscript(cwd: string, sessionId: string, warn?: (message: string) => void): LoadedTranscript {
  const file = transcriptPath(cwd, sessionId);
  const loaded: LoadedTranscript = { messages: [], allowRules: [], ignored: [] };
  if (!existsSync(file)) return loaded;
  let key: Buffer | undefined | Error;
  const ignore = (line: number, rule: unknown, why: string) => {
    const message = `${file} line ${line}: allow rule ${JSON.stringify(rule)} ignored: ${why}`;
    loaded.ignored.push(message);
    warn?.(message);
  };
  const checkRule = (line: number, entry: { rule?: unknown; sig?: unknown }) => {
    if (typeof entry.rule !== "string") return ignore(line, entry.rule, "it is not a rule");
    if (key === undefined) {
      try {
        key = existingSessionKey() ?? new Error(`no session key exists (${sessionKeyPath()}), so the engine signed nothing`);
      } catch (error) {
        key = error as Error;
      }
    }
    if (key instanceof Error) return ignore(line, entry.rule, key.message);
    if (!verifyAllowRule(key, cwd, sessionId, entry.rule, entry.sig)) {
      return ignore(line, entry.rule, "the engine did not write it (its signature is missing or wrong, or it was signed for another session or folder); answer allow_always again to keep it");
    }
    loaded.allowRules.push(entry.rule);
  };
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
    if (entry.type === "message") loaded.messages.push(entry.message);
    else if (entry.type === "allow_rule") checkRule(i + 1, entry);
    else if (entry.type === "reset") loaded.messages = [...entry.messages];
  }
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
