import type { EngineContext } from "../machine/context.js";
import type { InternalObserver } from "./observe.js";
import type { Conversation } from "../machine/conversation.js";
import type { ToolRisk } from "../tools/define-tool.js";
import type { RunStore, StoredAt, StoredRun, StoredSettings } from "../durable/run-store.js";
import { storedHeadOf } from "../durable/stored-run.js";

export interface RunCheckpointOptions {
  store: RunStore;
  settings: StoredSettings;
  /** The trace's next seq (after a crash, resume goes on after the trace's last line on disk instead). */
  trace?: { nextSeq(): number; flush?(): void };
  /** A tool's risk (undefined: not a tool of the run): a call that may change something is kept before it starts. */
  riskOf(tool: string): ToolRisk | undefined;
  onError: (error: Error) => void;
}

/** Checkpoints taken without one reaching the store, at most: a run of instant steps never lets the event loop turn. */
const SAVE_EVERY = 32;

/**
 * The run store observer: keeps a checkpoint of the run in the store as it goes, so a run whose process dies can be
 * resumed (docs/durable.md). A checkpoint is taken as each model call starts (`call_model`: the call is made again),
 * as the batch's questions are asked (`ask_permission`: asked again), as the tool batch starts, and as each tool call
 * starts and finishes (`execute_tool`: finished calls keep their results, started ones are judged by their risk).
 * It is taken as the state is entered, before the work it asks for starts. The checkpoint goes when the run ends.
 *
 * Taking a checkpoint copies the run's small state; writing it waits for the event loop to turn (as the trace's
 * lines do), and only the latest one is written: work that waits on I/O (a model's answer, a person) lets it reach
 * the store first. Two moments can't wait, and are written at once: the run's first checkpoint (the run is
 * resumable from its first model call on), and the start of a call whose tool may change something (`write`, `exec`,
 * or unknown): such a call must be known to have started before it runs, so that it is never run twice. Losing a
 * later checkpoint only means doing again what has no effect (a model call, a `read` tool), or, for a changing call
 * that ended in that same turn of the event loop, its result given as INTERRUPTED.
 */
export function runCheckpointer(options: RunCheckpointOptions): InternalObserver & { close(): void } {
  let state = "";
  let context: EngineContext | undefined;
  /** Call ids started in this batch: replaced (never changed) as one starts, so a checkpoint can hold it as it is. */
  let started: readonly string[] = [];
  let ended = false;
  let failed = false;
  /** The latest checkpoint taken and not yet written (see `Taken`). */
  let latest: Taken | undefined;
  let taken = 0;
  let scheduled = false;
  /** The conversation of the last save, to tell the store how much of it is unchanged. */
  let saved: Conversation | undefined;

  const take = (at: StoredAt, now: boolean) => {
    if (ended || failed || !context) return;
    // Most checkpoints are replaced by the next one before the event loop turns (a step takes five): taking one
    // keeps the context it was taken from (a value) and a few numbers; the stored head is made only for the
    // checkpoint that is written.
    latest = { context, at, time: Date.now(), traceSeq: options.trace?.nextSeq() ?? 0, started };
    if (now || saved === undefined || ++taken >= SAVE_EVERY) write();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        write();
      });
    }
  };
  const write = () => {
    const checkpoint = latest;
    latest = undefined;
    taken = 0;
    if (!checkpoint || ended || failed) return;
    try {
      // The trace reaches the disk first: a checkpoint never names a seq whose lines a SIGKILL could still lose.
      options.trace?.flush?.();
      // A conversation that continues the last one saved starts with its messages; a rebuilt one (compaction) does not.
      const messages = checkpoint.context.messages;
      const unchangedMessages = saved && messages.continues(saved) ? saved.length : 0;
      saved = messages;
      const head = storedHeadOf(checkpoint.context, options.settings, checkpoint.traceSeq, checkpoint.time, checkpoint.at, "running", checkpoint.started);
      // The store takes what it keeps before its first await (RunStore.save): the conversation's own list will do
      // (`toArray`: no copy when it is the run's latest), and a copy of the whole of it per save would make a step
      // dearer as the run grows.
      // Added to the head itself, not spread into a copy: in V8 a spread copy given a property it lacks outlives the
      // scavenges (bench/notes.md, "Promoted bytes").
      const run: StoredRun = Object.assign(head, { messages: messages.toArray() as unknown[] });
      options.store.save(run, { unchangedMessages }).catch(fail);
    } catch (error) {
      fail(error);
    }
  };
  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    options.onError(new Error(`could not keep the run's checkpoint: ${(error as Error).message}; the run goes on, but can't be resumed if its process dies`));
  };
  const mayChange = (tool: string) => options.riskOf(tool) !== "read";
  const checkpointer = {
    state(entered: Parameters<InternalObserver["state"] & {}>[0]) {
      const from = state;
      state = entered.state;
      context = entered.context;
      if (entered.state === "call_model" && from !== "stream_text") take("call_model", false);
      else if (entered.state === "ask_permission") take("ask_permission", false);
      else if (entered.state === "execute_tool") {
        started = [];
        take("execute_tool", false);
      } else if (entered.state === "done") {
        ended = true;
        latest = undefined;
        live.delete(checkpointer);
        options.store.delete(entered.context.run.sessionId).catch(() => undefined);
      }
    },
    emitted(event: Parameters<InternalObserver["emitted"] & {}>[0], now: EngineContext) {
      if (state !== "execute_tool") return;
      // A call started or finished within execute_tool: the context as that left it (its records replaced).
      context = now;
      if (event.type === "tool_start") {
        started = [...started, event.call.id];
        take("execute_tool", mayChange(event.call.name));
      } else if (event.type === "tool_result") take("execute_tool", false);
    },
    /** The run stops here (suspended, failed, or its process exits): the latest checkpoint is written now. */
    close() {
      write();
      live.delete(checkpointer);
    },
  };
  live.add(checkpointer);
  installExitHook();
  return checkpointer;
}

/**
 * A checkpoint as taken: the context it was taken from (a value: the engine replaces what it changes, never
 * changing it in place).
 */
interface Taken {
  context: EngineContext;
  at: StoredAt;
  time: number;
  traceSeq: number;
  started: readonly string[];
}

/** Checkpointers of runs going on: a process that exits (process.exit) writes their latest checkpoint first. */
const live = new Set<{ close(): void }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const checkpointer of live) checkpointer.close();
  });
}
