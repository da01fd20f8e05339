import type { EngineObserver } from "../machine/observe.js";
import { agentFolder } from "./agent-folder.js";
import { isoTime } from "./iso-time.js";
import { JsonlWriter } from "./jsonl-writer.js";
import { redactLine, redactText } from "./redact.js";
import { sessionKey, signAllowRule } from "./session-key.js";
import { transcriptPath, type TranscriptEntry } from "./transcript.js";

/**
 * Appends the conversation's new messages to `.agent/sessions/<sessionId>.jsonl` as they join it, and the allow
 * rules `allow_always` answers added, each signed with the user's session key so a later run can tell them from lines
 * something else wrote. The system prompt is an option of each run, not part of the conversation.
 * Lines are redacted like the trace's: a later run of the session reads the conversation back with `[REDACTED]` in
 * place of each secret, since the file is what anyone with the project folder can read. A rule is signed as it is
 * stored (redacted), so the signature still holds when it is read back.
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
}): EngineObserver & { close(): void } {
  const out = new JsonlWriter(transcriptPath(options.cwd, options.sessionId), options.onError, { inside: agentFolder(options.cwd) });
  const write = (entry: TranscriptEntry) => out.writeLine(redactLine(JSON.stringify(entry), options.secrets));
  let written = -1;
  let rules = 0;
  let list: readonly unknown[] | undefined;
  let compaction: unknown;
  // Most states add nothing: the time is only read once a state has a line to stamp (the same for all its lines).
  let stamp: string | undefined;
  const time = () => (stamp ??= isoTime());
  const signature = (rule: string): { sig?: string } => {
    try {
      return { sig: signAllowRule(sessionKey(), options.cwd, options.sessionId, rule) };
    } catch (error) {
      // Unsigned, the rule still holds for this run; later runs ignore it (with a warning) and ask again.
      options.onError(new Error(`could not sign the allow rule ${rule}: ${(error as Error).message}`));
      return {};
    }
  };
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
      if ((list !== undefined && messages !== list) || (list === undefined && (compacted || options.reset === true))) {
        // The history was replaced (compaction, prepareNextTurn): record it whole, then go on from its end.
        write({ type: "reset", time: time(), messages: messages.filter((m) => m.role !== "system") });
        written = messages.length;
      }
      list = messages;
      // Everything before the new user message (system prompt, loaded history) is already on record; a run whose
      // context could not be built has nothing new.
      if (written < 0) written = event.type === "buildContext.done" ? messages.length - 1 - context.inbox.claimed.length : messages.length;
      for (; written < messages.length; written++) {
        const message = messages[written];
        if (message.role === "system") continue;
        write({ type: "message", time: time(), message });
      }
      const added = context.deps.policy?.sessionRules;
      if (added) {
        for (; rules < added.length; rules++) {
          const rule = redactText(added[rules], options.secrets);
          write({ type: "allow_rule", time: time(), rule, ...signature(rule) });
        }
      }
      if (state === "done") out.flush();
    },
    close: () => out.close(),
  };
}
