import type { EngineContext } from "../machine/context.js";
import type { EngineObserver } from "../machine/observe.js";
import type { RunStore, StoredAt, StoredSettings } from "./run-store.js";
import { storedRunOf } from "./stored-run.js";

export interface RunCheckpointOptions {
  store: RunStore;
  settings: StoredSettings;
  /** The trace's next seq (after a crash, resume goes on after the trace's last line on disk instead). */
  trace?: { nextSeq(): number; flush?(): void };
  onError: (error: Error) => void;
}

/**
 * The run store observer: keeps a checkpoint of the run in the store as it goes, so a run whose process dies can be
 * resumed (docs/durable.md). A checkpoint is written as each model call starts (`call_model`: the call is made again),
 * as the batch's questions are asked (`ask_permission`: asked again), as the tool batch starts, and as each tool call
 * starts and finishes (`execute_tool`: finished calls keep their results, started ones are judged by their risk).
 * It is written as the state is entered, before the work it asks for starts. The checkpoint goes when the run ends.
 */
export function runCheckpointer(options: RunCheckpointOptions): EngineObserver & { close(): void } {
  let state = "";
  let context: EngineContext | undefined;
  let started: string[] = [];
  let failed = false;
  const save = (at: StoredAt) => {
    if (failed || !context) return;
    try {
      // The trace reaches the disk first: a checkpoint never names a seq whose lines a SIGKILL could still lose.
      options.trace?.flush?.();
      options.store.save(storedRunOf(context, options.settings, options.trace?.nextSeq() ?? 0, Date.now(), at, "running", started)).catch(fail);
    } catch (error) {
      fail(error);
    }
  };
  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    options.onError(new Error(`could not keep the run's checkpoint: ${(error as Error).message}; the run goes on, but can't be resumed if its process dies`));
  };
  return {
    state(entered) {
      const from = state;
      state = entered.state;
      context = entered.context;
      if (entered.state === "call_model" && from !== "stream_text") save("call_model");
      else if (entered.state === "ask_permission") save("ask_permission");
      else if (entered.state === "execute_tool") {
        started = [];
        save("execute_tool");
      } else if (entered.state === "done") {
        failed = true;
        options.store.delete(entered.context.run.sessionId).catch(() => undefined);
      }
    },
    emitted(event) {
      if (state !== "execute_tool") return;
      if (event.type === "tool_start") {
        started.push(event.call.id);
        save("execute_tool");
      } else if (event.type === "tool_result") save("execute_tool");
    },
    close: () => undefined,
  };
}
