import { AsyncLocalStorage } from "node:async_hooks";
import type { ResolvedSandbox } from "./settings.js";

/** The sandbox of one run: its settings, its workspace, and its warning (said at most once per run). */
export interface RunSandbox {
  settings: ResolvedSandbox;
  workspace: string;
  warn(message: string): void;
}

/** A run's sandbox whose warning goes to `sink` (read when first needed) once. */
export function runSandbox(settings: ResolvedSandbox, workspace: string, sink: () => ((message: string) => void) | undefined): RunSandbox {
  let warned = false;
  return {
    settings,
    workspace,
    warn(message) {
      if (warned) return;
      warned = true;
      const to = sink();
      if (to) to(message);
      else process.emitWarning(message, { code: "STATECRAFT_SANDBOX" });
    },
  };
}

/**
 * The run whose tool is executing: a tool that starts a process through the process helper (runInProcessGroup) gets
 * its run's sandbox without passing it on, so a tool written without the sandbox in mind is sandboxed too.
 */
const current = new AsyncLocalStorage<RunSandbox>();

export function withRunSandbox<T>(sandbox: RunSandbox | undefined, fn: () => T): T {
  return sandbox === undefined ? fn() : current.run(sandbox, fn);
}

export function currentRunSandbox(): RunSandbox | undefined {
  return current.getStore();
}
