import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import type { Message } from "../models/messages.js";

/** One line of `.agent/sessions/<sessionId>.jsonl`. */
export type TranscriptEntry =
  | { type: "message"; time: string; message: Message }
  /** An allow rule an `allow_always` answer added; it holds for later runs of the session. */
  | { type: "allow_rule"; time: string; rule: string }
  | { type: "compaction"; time: string; summary: string }
  /** The history was replaced (compaction, prepareNextTurn): these messages are the conversation from here on. */
  | { type: "reset"; time: string; messages: Message[] };

export function transcriptPath(cwd: string, sessionId: string): string {
  return join(cwd, ".agent", "sessions", `${sessionId}.jsonl`);
}

export interface LoadedTranscript {
  messages: Message[];
  allowRules: string[];
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
 * a damaged line elsewhere is an error naming the file and line.
 */
export function loadTranscript(cwd: string, sessionId: string): LoadedTranscript {
  const file = transcriptPath(cwd, sessionId);
  const loaded: LoadedTranscript = { messages: [], allowRules: [] };
  if (!existsSync(file)) return loaded;
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
    else if (entry.type === "allow_rule") loaded.allowRules.push(entry.rule);
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
