import { getEventListeners } from "node:events";
import { fromCallback } from "xstate";
import type { ModelErrorAction } from "../hooks.js";
import type { ModelResponse } from "../models/model.js";
import { askPermission, type AskPermissionInput, type PermissionStep } from "./ask-permission.js";
import { buildContext, type BuildContextInput, type BuiltContext } from "./build-context.js";
import { callModel, type CallModelInput } from "./call-model.js";
import { decideRecovery, type DecideRecoveryInput } from "./decide-recovery.js";
import type { Report, WorkEvent } from "./report.js";
import { runTools, type RunToolsInput } from "./run-tools.js";

/**
 * The engine's I/O, one function per kind of work: each takes its input and an abort signal (aborted when the engine
 * leaves the state that asked for it) and may report progress as it goes.
 */
export interface Effects {
  buildContext(input: BuildContextInput, signal: AbortSignal, report: Report): Promise<BuiltContext>;
  callModel(input: CallModelInput, signal: AbortSignal, report: Report): Promise<ModelResponse>;
  askPermission(input: AskPermissionInput, signal: AbortSignal, report: Report): Promise<PermissionStep[]>;
  runTools(input: RunToolsInput, signal: AbortSignal, report: Report): Promise<void>;
  decideRecovery(input: DecideRecoveryInput, signal: AbortSignal, report: Report): Promise<ModelErrorAction>;
}

export type EffectName = keyof Effects;

export const defaultEffects: Effects = { buildContext, callModel, askPermission, runTools, decideRecovery };

/** What a state asks of the effects actor: start a piece of work, or cancel the one in flight. */
export type EffectRequest = { [K in EffectName]: { type: K; input: Parameters<Effects[K]>[0] } }[EffectName] | { type: "cancel" };

/** How a piece of work ends, sent back to the engine: `<name>.done` with its output, or `<name>.error`. */
export type EffectResult = {
  [K in EffectName]: { type: `${K}.done`; output: Awaited<ReturnType<Effects[K]>> } | { type: `${K}.error`; error: unknown };
}[EffectName];

/** The two event types that end each piece of work, made once (the check runs on every exit of a working state). */
const RESULT_TYPES = {} as Record<EffectName, readonly [string, string]>;
for (const name of Object.keys(defaultEffects) as EffectName[]) RESULT_TYPES[name] = [`${name}.done`, `${name}.error`];

/** True for the event that ends the given piece of work. */
export function isResultOf(event: { type: string }, effect: EffectName): boolean {
  const [done, error] = RESULT_TYPES[effect];
  return event.type === done || event.type === error;
}

/**
 * One long-lived actor per run that does the engine's I/O. A state asks for work on entry; the work reports back with
 * events and ends with `<name>.done` / `<name>.error`; a state left before its work ended cancels it on exit, which
 * aborts the work's signal and drops whatever it still reports. At most one piece of work is in flight (one state is
 * active at a time), and stopping the run aborts it too. Pieces of work that end normally may share one signal: a
 * signal aborts when the work it serves is cancelled, which may be later work of the same run.
 *
 * Long-lived rather than one actor per call: an actor per model call, permission step and tool batch cost more than
 * the rest of a step's bookkeeping (docs/performance.md).
 */
export function effectsActor(effects: Effects = defaultEffects) {
  return fromCallback<EffectRequest, undefined, WorkEvent | EffectResult>(({ receive, sendBack }) => {
    let current: AbortController | undefined;
    // A finished piece of work's controller, never aborted and with nobody listening, serves the next piece: making an
    // AbortSignal costs several microseconds, more than the rest of what a step asks of this actor. A piece of work
    // that leaves a listener behind gets a fresh one next time, so listeners never pile up on a shared signal.
    let spare: AbortController | undefined;
    const cancel = () => {
      if (current === undefined) return;
      const controller = current;
      current = undefined;
      controller.abort();
    };
    const release = (controller: AbortController) => {
      current = undefined;
      if (!controller.signal.aborted && getEventListeners(controller.signal, "abort").length === 0) spare = controller;
    };
    receive((request) => {
      cancel();
      if (request.type === "cancel") return;
      const controller = spare ?? new AbortController();
      spare = undefined;
      current = controller;
      const report: Report = (event) => {
        if (current === controller) sendBack(event);
      };
      const name = request.type;
      let work: Promise<unknown>;
      try {
        work = (effects[name] as (input: unknown, signal: AbortSignal, report: Report) => Promise<unknown>)(request.input, controller.signal, report);
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        (output) => {
          if (current !== controller) return;
          release(controller);
          sendBack({ type: `${name}.done`, output } as EffectResult);
        },
        (error: unknown) => {
          if (current !== controller) return;
          release(controller);
          sendBack({ type: `${name}.error`, error } as EffectResult);
        },
      );
    });
    return cancel;
  });
}
