import type { EngineContext } from "../machine/context.js";
import type { InternalObserver, StateEntered } from "./observe.js";
import { agentFolder } from "../record/agent-folder.js";
import { isoTime } from "../record/iso-time.js";
import { JsonlWriter, type LineSink } from "../record/jsonl-writer.js";
import { mayHoldSecret, redactLine, redactOwnPart } from "../record/redact.js";
import { lineSigner, sessionKey, type LineSigner } from "../record/session-key.js";
import type { Message } from "../models/messages.js";
import { transcriptHead, transcriptPath, type TranscriptEntry } from "../record/transcript.js";
import { reportingBlobs, type BlobStore } from "../record/blobs.js";
import { messagesToBlobs, messageToBlobs } from "../record/blob-parts.js";

/**
 * Per transcript file, the signature of the last line written in this process: the next line chains to it, whichever
 * writer of the session writes it (a fork's inherited lines, then its run). Dropped when a writer closes (its lines
 * are on disk then, and the next writer reads the head from the file).
 */
const heads = new Map<string, string>();

/** A message line's text around its time and message, as `JSON.stringify({ type: "message", time, message })` gives. */
const MESSAGE_OPEN = `{"type":"message","time":"`;
const MESSAGE_KEY = `","message":`;
const MESSAGE_FRAME_HOLDS = mayHoldSecret(MESSAGE_OPEN) || mayHoldSecret(MESSAGE_KEY);

/**
 * Writes transcript entries: each line redacted like the trace's, then signed with the user's session key
 * (session-key.ts), so a later run can tell the engine's lines from lines something else wrote. Without a key that
 * can be made, lines are written unsigned (later runs ignore them) and `onError` hears why, once.
 */
export function transcriptLines(options: {
  cwd: string;
  sessionId: string;
  secrets: readonly string[];
  onError: (error: Error) => void;
  /** Where the lines go instead of the session's file. */
  out?: LineSink;
  /** false: lines kept where nothing else can write (`store: "memory"`) are not signed, and no session key is made. */
  signed?: boolean;
  /** Where images and files go, the lines naming them by hash (record/blob-parts.ts); without it they are inline. */
  blobs?: BlobStore;
}): { write(entry: TranscriptEntry): void; message(time: string, message: Message): void; flush(): void; close(): void } {
  const file = transcriptPath(options.cwd, options.sessionId);
  const out = options.out ?? new JsonlWriter(file, options.onError, { inside: agentFolder(options.cwd) });
  // Lines sent elsewhere (a database table) chain from their own start; a file's from its last line the engine wrote.
  const chainKey = options.out === undefined ? file : undefined;
  let own = "";
  let signer: LineSigner | undefined | false = options.signed === false ? false : undefined;
  const sign = (line: string) => {
    if (signer === undefined) {
      try {
        signer = lineSigner(sessionKey(), options.cwd, options.sessionId);
      } catch (error) {
        signer = false;
        options.onError(new Error(`transcript lines are written unsigned, so later runs of the session ignore them: ${(error as Error).message}`));
      }
    }
    if (signer === false) return line;
    if (chainKey !== undefined && !heads.has(chainKey)) {
      out.flush();
      heads.set(chainKey, transcriptHead(options.cwd, options.sessionId, signer));
    }
    const signed = signer.sign(line, chainKey === undefined ? own : heads.get(chainKey)!);
    const sig = signer.signatureOf(signed)!;
    if (chainKey === undefined) own = sig;
    else heads.set(chainKey, sig);
    return signed;
  };
  const blobs = options.blobs ? reportingBlobs(options.blobs, options.onError) : undefined;
  // Binary data goes to the blob store before a line is redacted: the bytes are never in the line, so redaction can't
  // alter them, and text parts are redacted as any text.
  const stored = (entry: TranscriptEntry): TranscriptEntry => {
    if (!blobs) return entry;
    if (entry.type === "message") return { ...entry, message: messageToBlobs(entry.message, blobs) };
    if (entry.type === "reset") return { ...entry, messages: messagesToBlobs(entry.messages, blobs) };
    return entry;
  };
  return {
    write: (entry) => out.writeLine(sign(redactLine(JSON.stringify(stored(entry)), options.secrets))),
    // The common line, written around the message's JSON: serialised once, and only the message scanned for secrets.
    message(time, message) {
      const own = JSON.stringify(blobs ? messageToBlobs(message, blobs) : message);
      const line = `${MESSAGE_OPEN}${time}${MESSAGE_KEY}${own}}`;
      out.writeLine(sign(MESSAGE_FRAME_HOLDS ? redactLine(line, options.secrets) : redactOwnPart(line, own, options.secrets)));
    },
    flush: () => out.flush(),
    close: () => {
      out.close();
      if (chainKey !== undefined) heads.delete(chainKey);
    },
  };
}

/**
 * Appends the conversation's new messages to `.agent/sessions/<sessionId>.jsonl` as they join it, and the allow
 * rules `allow_always` answers added. The system prompt is an option of each run, not part of the conversation.
 * Lines are redacted like the trace's: a later run of the session reads the conversation back with `[REDACTED]` in
 * place of each secret, since the file is what anyone with the project folder can read. Every line is signed
 * (`transcriptLines`).
 */
export function transcriptWriter(options: {
  cwd: string;
  sessionId: string;
  secrets: readonly string[];
  onError: (error: Error) => void;
  /**
   * A run recovered after its process died: the transcript may hold messages of the lost part (after the checkpoint),
   * so the conversation the run goes on from is recorded whole first.
   */
  reset?: boolean;
  out?: LineSink;
  signed?: boolean;
  blobs?: BlobStore;
}): InternalObserver & { close(): void } {
  const out = transcriptLines(options);
  const write = out.write;
  let written = -1;
  let rules = 0;
  let list: StateEntered<EngineContext>["context"]["messages"] | undefined;
  let compaction: unknown;
  // Most states add nothing: the time is only read once a state has a line to stamp (the same for all its lines).
  let stamp: string | undefined;
  const time = () => (stamp ??= isoTime());
  return {
    state({ context, state, event }) {
      if (state === "build_context") return;
      const messages = context.messages;
      stamp = undefined;
      let compacted = false;
      if (context.call.compaction && context.call.compaction !== compaction) {
        compaction = context.call.compaction;
        compacted = true;
        write({ type: "compaction", time: time(), summary: context.call.compaction.summary });
      }
      if ((list !== undefined && !messages.continues(list)) || (list === undefined && (compacted || options.reset === true))) {
        // The history was replaced (compaction, prepareNextTurn): record it whole, then go on from its end.
        write({ type: "reset", time: time(), messages: messages.filter((m) => m.role !== "system") });
        written = messages.length;
      }
      list = messages;
      // Everything before the new user message (system prompt, loaded history) is already on record; a run whose
      // context could not be built has nothing new.
      if (written < 0) written = event.type === "buildContext.done" ? messages.length - 1 - context.inbox.claimed.length : messages.length;
      for (; written < messages.length; written++) {
        const message = messages.at(written)!;
        if (message.role === "system") continue;
        out.message(time(), message);
      }
      const added = context.deps.policy?.sessionRules;
      if (added) {
        for (; rules < added.length; rules++) {
          write({ type: "allow_rule", time: time(), rule: added[rules] });
        }
      }
      if (state === "done") out.flush();
    },
    close: () => out.close(),
  };
}
